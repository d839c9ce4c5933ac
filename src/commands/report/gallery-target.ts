import { lstatSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readHead } from '../../batch/output-files.js';
import { sandboxStatePath } from '../../batch/placement.js';
import { isGalleryPage } from '../../documents/gallery/page.js';
import { shownFromCwd } from '../../documents/shown-path.js';
import { OWNER_MARKER } from '../../downloads/output-owner.js';
import { type Fields, UserError } from '../../errors.js';
import { isS3Uri } from '../../manifest/index.js';

/**
 * Where `report --html FILE` may write (docs/gallery.md): a new file, or a gallery page mediabatch
 * wrote before (recognised by its first bytes). Anything else needs --force, and the files that
 * hold what was paid for (the manifest, the ledger and its companions, every saved output and its
 * sidecar, the folder's owner marker) are refused even then.
 */

export interface GalleryGuard {
  manifestFile: string;
  ledgerPath: string;
  outputDir: string;
  /** Every saved output the ledger records (absolute paths). */
  savedFiles: readonly string[];
  cwd: string;
}

/** Throws (exit 2, nothing written) when the page must not go to `path`. */
export function checkGalleryTarget(path: string, guard: GalleryGuard, force: boolean): void {
  let isFolder: boolean;
  try {
    isFolder = statSync(path).isDirectory();
  } catch {
    // Nothing there, or a dangling link: writing replaces the name, never what a link points to.
    if (!exists(path)) return;
    isFolder = false;
  }
  const shown = shownFromCwd(guard.cwd, path);
  if (isFolder)
    throw refused(`${shown} is a folder; name a file for the gallery`, { target: path, folder: true });
  const what = guardedFile(path, guard);
  if (what !== null)
    throw refused(
      `${shown} is ${what}; a gallery never goes over it, not even with \`force\`. Name another file`,
      { target: path, guarded: what },
    );
  if (force || isGalleryPage(readHead(path))) return;
  throw refused(
    `${shown} exists and is not a gallery page mediabatch wrote; nothing was written. Name a new file ` +
      '(or leave `to` out for <output dir>/index.html), or add `force` to replace it',
    { target: path, guarded: null },
  );
}

/**
 * The names a saved file would have to bear to be the file at `path` (see guardedFile): none
 * when nothing is there, so that writing a new page needs no look at the saved files.
 */
export function targetNames(path: string): string[] {
  return exists(path) ? [...new Set([path, realOrSelf(path)])] : [];
}

/** What a guarded file at `path` is, or null for any other file. */
function guardedFile(path: string, guard: GalleryGuard): string | null {
  const real = realOrSelf(path);
  const named: Array<[string, string]> = [
    [guard.manifestFile, 'the manifest'],
    [guard.ledgerPath, 'the ledger'],
    [`${guard.ledgerPath}-wal`, "the ledger's journal"],
    [`${guard.ledgerPath}-shm`, "the ledger's journal"],
    [`${guard.ledgerPath}.lock`, "the ledger's lock"],
    [sandboxStatePath(guard.ledgerPath), "the embedded sandbox's state"],
    // A bucket's marker is an object (lib/gallery-s3.ts guards it); joined, its URI is no local path.
    ...(isS3Uri(guard.outputDir)
      ? []
      : [[join(guard.outputDir, OWNER_MARKER), "the output folder's owner marker"] as [string, string]]),
  ];
  const target = statOrNull(path);
  for (const [file, what] of named) {
    if (realOrSelf(file) === real) return what;
    // A hard link is the same file under another name.
    const other = statOrNull(file);
    if (target !== null && other !== null && other.ino === target.ino && other.dev === target.dev)
      return what;
  }
  const saved = new Set(guard.savedFiles);
  const sidecars = new Set(guard.savedFiles.map((file) => file.replace(/\.[^./\\]*$/, '.json')));
  for (const name of new Set([path, real])) {
    if (saved.has(name)) return 'a saved output';
    if (sidecars.has(name)) return "a saved output's provenance sidecar";
  }
  return null;
}

const refused = (message: string, fields: Fields) => new UserError(message, 'target_refused', fields);

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function statOrNull(path: string): { ino: number; dev: number } | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
