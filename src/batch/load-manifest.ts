import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import {
  formatProblem,
  loadManifest as loadFile,
  loadManifestText,
  type Manifest,
  type ManifestProblem,
  type ManifestResult,
} from '../manifest/index.js';

/** A manifest with problems: every one, each with its file, line and column (exit code 2). */
export class ManifestError extends UserError {
  constructor(readonly problems: ManifestProblem[]) {
    const count = problems.length;
    super(
      `${count} problem${count === 1 ? '' : 's'} in the manifest:\n${problems.map(formatProblem).join('\n')}`,
      ExitCode.Usage,
      'manifest_invalid',
    );
    this.name = 'ManifestError';
  }

  /** Every problem on a line of its own, file:line:column first. */
  get lines(): string {
    return this.problems.map(formatProblem).join('\n');
  }
}

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
