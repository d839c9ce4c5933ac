import {
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { shownFromCwd } from '../../documents/shown-path.js';
import { checkOwner, OWNER_MARKER, parseMarker } from '../../downloads/output-owner.js';
import { isS3Uri } from '../../manifest/index.js';
import { sandboxStatePath } from '../resolve/placement.js';

/**
 * What a file at a path a person names may be, when it is one no command writes over, not even
 * with `force` (docs/results.md, "The door for named files"): the table of protected kinds and
 * their words, and how each is recognised. named-target.ts is the door that asks.
 */
export const PROTECTED = {
  manifest: 'the manifest',
  items_from: "the manifest's items_from file",
  ledger: 'the ledger',
  ledger_journal: "the ledger's journal",
  ledger_lock: "the ledger's lock",
  sandbox_state: "the embedded sandbox's state",
  sqlite: 'a SQLite database (a ledger, perhaps of another batch)',
  sqlite_companion: "a SQLite database's journal or lock (a ledger's, perhaps of another batch)",
  owner_marker: "an output folder's owner marker",
  saved_output: 'a saved output',
  sidecar: "a saved output's provenance sidecar",
  owned_file: 'a file in an output folder a batch owns',
} as const;

export type ProtectedKind = keyof typeof PROTECTED;

/** What a command names besides its target, each as what it is: the files it reads, the ledger's. */
export interface TargetGuard {
  /** Where paths are shown from. */
  cwd: string;
  /** The files the command reads or keeps (the manifest, its items_from file, the ledger and its companions). */
  named: ReadonlyArray<readonly [string, ProtectedKind]>;
  /** The batch's output location: its owner marker, and the gallery's home. */
  outputDir: string;
  /** The batch as an owner marker names it, to tell its own output folder from another's. */
  owner: { manifest: string; ledger: string };
}

/** A SQLite ledger's file and every file beside it that belongs to it. */
export function ledgerFiles(ledger: string | null): Array<readonly [string, ProtectedKind]> {
  // A ledger kept by a database server has no file here to protect.
  if (ledger === null) return [];
  return [
    [ledger, 'ledger'],
    [`${ledger}-wal`, 'ledger_journal'],
    [`${ledger}-shm`, 'ledger_journal'],
    [`${ledger}-journal`, 'ledger_journal'],
    [`${ledger}.lock`, 'ledger_lock'],
    [sandboxStatePath(ledger), 'sandbox_state'],
  ];
}

/** Enough of a file to know it: a gallery page's head, an export's first record. */
const HEAD_BYTES = 64 * 1024;
const SQLITE_HEADER = Buffer.from('SQLite format 3\u0000', 'latin1');
/** The files SQLite and mediabatch keep beside a ledger, by the suffix they add to its name. */
const COMPANION = /(-wal|-shm|-journal|\.lock|\.sandbox\.jsonl)$/;

/** The first bytes of a file (empty when it cannot be read). */
export function headOf(path: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    return buffer.subarray(0, readSync(fd, buffer, 0, HEAD_BYTES, 0));
  } catch {
    return Buffer.alloc(0);
  } finally {
    closeSync(fd);
  }
}

export const isSqliteHead = (head: Buffer): boolean =>
  head.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER);

/**
 * Which of the guard's named files `path` is (the same name, a symlink to it, or a hard link: the
 * same device and inode), or null.
 */
export function namedFile(path: string, guard: TargetGuard): ProtectedKind | null {
  const real = realOrSelf(path);
  const target = statOrNull(path);
  for (const [file, kind] of guard.named) {
    if (resolve(file) === resolve(path) || realOrSelf(file) === real) return kind;
    const other = target === null ? null : statOrNull(file);
    if (other !== null && other.ino === target!.ino && other.dev === target!.dev) return kind;
  }
  return null;
}

/** A journal, lock or sandbox state beside any SQLite file: another batch's ledger is kept too. */
export function sqliteCompanion(path: string): boolean {
  const base = realOrSelf(path).replace(COMPANION, '');
  return base !== realOrSelf(path) && isSqliteHead(headOf(base));
}

/** An output folder a batch owns: the nearest folder at or above `path` that holds an owner marker. */
export interface OwnedFolder {
  dir: string;
  /** The batch its marker names (null: a marker that cannot be read, owned all the same). */
  batch: string | null;
  /** The guard's own batch owns it, and it is its output folder. */
  ours: boolean;
}

export function ownedFolderOf(path: string, guard: TargetGuard): OwnedFolder | null {
  for (const start of new Set([resolve(path), realOfNearest(path)]))
    for (let dir = start; ; dir = dirname(dir)) {
      const marker = join(dir, OWNER_MARKER);
      if (existsSync(marker)) return owned(dir, marker, guard);
      if (dirname(dir) === dir) break;
    }
  return null;
}

function owned(dir: string, marker: string, guard: TargetGuard): OwnedFolder {
  let batch: string | null = null;
  try {
    const read = parseMarker(dir, readFileSync(marker, 'utf8'));
    if (!('problem' in read)) batch = read.manifest;
  } catch {
    // unreadable: owned, by a batch it cannot name
  }
  const home = !isS3Uri(guard.outputDir) && realOrSelf(dir) === realOrSelf(guard.outputDir);
  return { dir, batch, ours: home && checkOwner(dir, guard.owner).kind === 'mine' };
}

/** How refusals name an owned folder: its path, and whose it is. */
export function ownedWords(folder: OwnedFolder, cwd: string): string {
  return `${shownFromCwd(cwd, folder.dir)}, the output folder of ${ownerWords(folder)}`;
}

export const ownerWords = (folder: OwnedFolder): string =>
  folder.batch === null ? 'a batch' : `the batch ${folder.batch}`;

/** What a file inside an owned folder is: its marker, a saved output or sidecar, or another file. */
export function ownedFileKind(path: string, saved: ReadonlySet<string>): ProtectedKind {
  if (basename(path) === OWNER_MARKER) return 'owner_marker';
  return savedKind(path, saved) ?? 'owned_file';
}

/** A saved output, or its sidecar, under either of the path's names; null for neither. */
export function savedKind(path: string, saved: ReadonlySet<string>): ProtectedKind | null {
  const sidecars = new Set([...saved].map((file) => file.replace(/\.[^./\\]*$/, '.json')));
  for (const name of new Set([resolve(path), realOrSelf(path)])) {
    if (saved.has(name)) return 'saved_output';
    if (sidecars.has(name)) return 'sidecar';
  }
  return null;
}

/** The names a saved file would have to bear to be the file at `path`: none when nothing is there. */
export function targetNames(path: string): string[] {
  return exists(path) ? [...new Set([resolve(path), realOrSelf(path)])] : [];
}

export function exists(path: string): boolean {
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
    return resolve(path);
  }
}

/** The real path of the nearest part of `path` that exists, with the rest after it. */
function realOfNearest(path: string): string {
  const full = resolve(path);
  for (let dir = full; ; dir = dirname(dir)) {
    if (exists(dir)) return join(realOrSelf(dir), full.slice(dir.length));
    if (dirname(dir) === dir) return full;
  }
}
