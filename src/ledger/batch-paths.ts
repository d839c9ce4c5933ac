import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * Where a batch's saved files are, as the ledger stores them: relative to the batch root, the
 * folder holding the manifest, so a project moved or copied as a whole (manifest, `.mediabatch/`,
 * output folder) still finds its outputs and pays for none of them again (docs/manifest.md, "Files
 * and paths"). Everything above the ledger sees absolute paths; only the rows hold relative ones.
 *
 * Three forms of stored path:
 * - relative: a file inside the batch root, read against the manifest's folder as it is now;
 * - absolute: a file outside it (an absolute `output.dir`, say): that folder does not move with
 *   the project, so a relative `../../data/out` would point elsewhere after a move;
 * - an `s3://` URI: an object in a bucket, already independent of where the project is.
 */

/** The folder a manifest's relative paths are read against: its own, absolute. */
export function batchRootOf(manifestPath: string): string {
  return dirname(resolve(manifestPath));
}

/** `path` relative to `root` when it lies inside it, else null. */
function inside(root: string, path: string): string | null {
  const rel = relative(root, path);
  if (rel === '' || isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`)) return null;
  return rel;
}

const isUri = (path: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(path);

/**
 * Pure: the stored form of an absolute path, relative to the first of `roots` that holds it.
 * Anything else (a URI, a path outside every root, one already relative) is kept as it is.
 */
export function storedPath(path: string, roots: readonly string[]): string {
  if (isUri(path) || !isAbsolute(path)) return path;
  for (const root of roots) {
    const rel = inside(root, path);
    if (rel !== null) return rel;
  }
  return path;
}

/**
 * The batch's paths for one open ledger: `root` is the manifest's folder now; `recordedRoot` the
 * one the batch's row names (where the manifest was when the ledger last opened it for writing).
 */
export class BatchPaths {
  readonly #root: string;
  readonly #recordedRoot: string;
  readonly #prefix: string;

  constructor(root: string, recordedRoot: string) {
    this.#root = root;
    this.#recordedRoot = recordedRoot;
    // Joined by hand, not with resolve(): status and plan turn every saved file's path back, and
    // a stored relative path is already normal (relative() made it), so joining cannot differ.
    this.#prefix = root.endsWith(sep) ? root : `${root}${sep}`;
  }

  /** What the ledger stores for an absolute path given by the layers above. */
  stored(path: string): string {
    return storedPath(path, [this.#root]);
  }

  /** The absolute path (or URI) a stored path stands for, as seen from the manifest's folder now. */
  absolute(stored: string): string {
    if (isUri(stored)) return stored;
    if (!isAbsolute(stored)) return `${this.#prefix}${stored}`;
    // Only a ledger read without migrating (plan, status: read-only) still holds absolute paths
    // inside the folder its manifest was in; the project has moved with them, as the migration
    // assumes (migrations.ts).
    if (this.#recordedRoot === this.#root || inside(this.#root, stored) !== null) return stored;
    const rel = inside(this.#recordedRoot, stored);
    return rel === null ? stored : `${this.#prefix}${rel}`;
  }
}
