import { resolve } from 'node:path';
import { ManifestError, UserError } from '../errors.js';
import {
  loadManifest as loadFile,
  loadManifestText,
  type Manifest,
  type ManifestResult,
} from '../manifest/index.js';

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
