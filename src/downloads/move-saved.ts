import { link, lstat, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sidecarPathFor } from './sidecar.js';
import { fileMatches } from './verify-file.js';

/**
 * Saved files that take a new name with their renamed item (docs/manifest.md, "Renaming an
 * item"), in two steps around the ledger's own: `linkNewNames` gives each file and its sidecar the
 * new name as a hard link (both names hold the bytes, so a crash at any step loses nothing and
 * doing it again is harmless), then, once the ledger records the new names, `dropOldNames`
 * removes the old ones. A file the ledger did not write is never overwritten.
 */

export interface NameMove {
  from: string;
  to: string;
  bytes: number;
  sha256: string;
}

const refusal = (path: string) =>
  Object.assign(
    new Error(
      `refusing to overwrite ${path}: this ledger did not write it; move it elsewhere, then run again`,
    ),
    { code: 'EEXIST' },
  );

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

const textOf = (path: string) => readFile(path).catch(() => null);

/**
 * A case-only rename (`Beach` -> `beach`) is one file on macOS and Windows: a link there would be
 * the same file, and dropping the old name would drop it. It is renamed in place instead.
 */
const caseOnly = (move: NameMove) =>
  move.from !== move.to && move.from.toLowerCase() === move.to.toLowerCase();

/** Throws (code EEXIST) when a new name, or its sidecar's, holds something else. Checks all first. */
async function refuseOthers(moves: readonly NameMove[]): Promise<void> {
  for (const move of moves) {
    if (move.from === move.to) continue;
    if ((await exists(move.to)) && !(await fileMatches(move.to, move.bytes, move.sha256)))
      throw refusal(move.to);
    const [from, to] = [sidecarPathFor(move.from), sidecarPathFor(move.to)];
    if (!(await exists(to))) continue;
    const [was, there] = await Promise.all([textOf(from), textOf(to)]);
    if (was === null || there === null || !was.equals(there)) throw refusal(to);
  }
}

export async function linkNewNames(moves: readonly NameMove[]): Promise<void> {
  await refuseOthers(moves);
  const folders = new Set<string>();
  for (const move of moves) {
    if (move.from === move.to || caseOnly(move)) continue;
    await mkdir(dirname(move.to), { recursive: true });
    await linkOnce(move.from, move.to);
    await linkOnce(sidecarPathFor(move.from), sidecarPathFor(move.to));
    folders.add(dirname(move.to));
  }
  for (const folder of folders) {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/**
 * A name already there was checked by refuseOthers. A missing file is not linked: the ledger still
 * follows it to the new name, and the run's check of saved files fetches it again there.
 */
async function linkOnce(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'EEXIST' && code !== 'ENOENT') throw error;
  }
}

export async function dropOldNames(moves: readonly NameMove[]): Promise<void> {
  for (const move of moves) {
    if (move.from === move.to) continue;
    for (const [from, to] of [
      [move.from, move.to],
      [sidecarPathFor(move.from), sidecarPathFor(move.to)],
    ] as const) {
      if (caseOnly(move)) await rename(from, to).catch(ignoreMissing);
      else await unlink(from).catch(ignoreMissing);
    }
  }
}

function ignoreMissing(error: unknown): void {
  if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
}
