import { resolve } from 'node:path';
import { ManifestError, UserError } from '../../errors.js';
import {
  loadManifest as loadFile,
  loadManifestText,
  type Manifest,
  type ManifestItem,
  ManifestRead,
  type ManifestResult,
  NotStreamable,
  ProblemList,
  readManifestText,
  streamManifestChunks,
} from '../../manifest/index.js';

/** A manifest from a file, or from YAML text read as if it were a file in `baseDir`. */
export type ManifestSource = string | { yaml: string; baseDir: string; fileName?: string };

/** Reads and checks a manifest; throws ManifestError listing every problem. */
export function loadManifest(source: ManifestSource): Manifest {
  let result: ManifestResult;
  if (typeof source === 'string') result = loadFile(resolve(source));
  else if (source && typeof source.yaml === 'string' && typeof source.baseDir === 'string')
    result = loadManifestText(resolve(source.baseDir, source.fileName ?? 'manifest.yaml'), source.yaml);
  else throw new UserError('loadManifest(): give a path, or { yaml, baseDir }');
  if (!result.ok) throw new ManifestError(result.problems);
  return result.manifest;
}

/**
 * A manifest's items one at a time, for a batch too large to hold (docs/api.md): its items are
 * read twice, a chunk at a time, first to check every item (throwing ManifestError with every
 * problem before any item is given), then to give them. Only the ids are held across the file. A
 * manifest whose ids or names need all items at once (a matrix, variants, list variables,
 * `output.name`) is read whole and its items given from memory.
 */
export async function* manifestItems(source: ManifestSource): AsyncGenerator<ManifestItem> {
  const file = typeof source === 'string' ? resolve(source) : null;
  const read = file === null ? null : readManifestText(file);
  if (file === null || read === null || !('text' in read)) {
    yield* loadManifest(source).items;
    return;
  }
  const pass = async function* () {
    const problems = new ProblemList();
    yield* streamManifestChunks(file, read.text, new ManifestRead(problems));
    if (problems.size > 0) throw new ManifestError(problems.sorted());
  };
  try {
    for await (const _ of pass());
  } catch (error) {
    if (!(error instanceof NotStreamable)) throw error;
    yield* loadManifest(source).items;
    return;
  }
  for await (const chunk of pass()) yield* chunk;
}
