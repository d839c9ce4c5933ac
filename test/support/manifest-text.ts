import { type Manifest, parseManifest } from '../../src/manifest/index.js';

/** parseManifest of a manifest at /batches/m.yaml, with its sibling files in memory. */
export function parseText(
  text: string,
  files: Record<string, string> = {},
): ReturnType<typeof parseManifest> {
  return parseManifest('/batches/m.yaml', text, (rel) =>
    rel in files
      ? { file: `/batches/${rel}`, text: files[rel]! }
      : { file: `/batches/${rel}`, error: 'file not found' },
  );
}

/** The manifest, or an error listing every problem (path and message). */
export function manifestOf(text: string, files: Record<string, string> = {}): Manifest {
  const result = parseText(text, files);
  if (!result.ok) throw new Error(result.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
  return result.manifest;
}
