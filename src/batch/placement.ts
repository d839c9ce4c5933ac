import { basename, dirname, join, resolve } from 'node:path';
import { isS3Uri, type Manifest, parseS3Uri, s3Beside, s3Uri } from '../manifest/index.js';

/**
 * Where a batch lives, computed here and nowhere else: its ledger (`.mediabatch/<name>.sqlite`
 * beside the manifest, or the path given), and for the embedded sandbox a ledger and an output
 * location of its own, so a demo's placeholder videos and spend never meet a real service's
 * (docs/services.md).
 */
export interface Placement {
  manifest: Manifest;
  ledgerPath: string;
}

export function placeBatch(
  manifest: Manifest,
  options: { ledger: string | undefined; sandbox: boolean; cwd: string },
): Placement {
  const placed = options.sandbox ? { ...manifest, outputDir: sandboxLocation(manifest.outputDir) } : manifest;
  if (options.ledger) return { manifest: placed, ledgerPath: resolve(options.cwd, options.ledger) };
  const folder = join(dirname(manifest.file), '.mediabatch');
  const ledgerFolder = options.sandbox ? join(folder, 'sandbox') : folder;
  return { manifest: placed, ledgerPath: join(ledgerFolder, `${manifest.name}.sqlite`) };
}

/**
 * A sandbox run's output location: `out/demo` becomes `out/sandbox/demo`, and `s3://b/renders/demo`
 * becomes `s3://b/renders/sandbox/demo`, the same rule for a folder and a bucket.
 */
function sandboxLocation(outputDir: string): string {
  const location = isS3Uri(outputDir) ? parseS3Uri(outputDir) : null;
  if (location !== null && !('problem' in location)) return s3Uri(s3Beside(location, 'sandbox'));
  return join(dirname(outputDir), 'sandbox', basename(outputDir));
}

/** The embedded sandbox keeps its jobs beside the ledger (docs/sandbox-state.md). */
export const sandboxStatePath = (ledgerPath: string): string => `${ledgerPath}.sandbox.jsonl`;
