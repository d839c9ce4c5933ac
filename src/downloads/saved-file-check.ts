import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/**
 * Whether a saved output is still what the ledger recorded when it saved it (docs/results.md,
 * "Saved files on disk"). Cheap by default: one stat, size and modification time; with `verify`,
 * the content too, by its SHA-256.
 *
 * - missing: nothing (or a folder) at its path;
 * - altered: its size, or with `verify` its SHA-256, differs: not the bytes that were paid for;
 * - touched: same size, another modification time, content not read: maybe altered, maybe only
 *   copied without keeping times; `--verify` tells.
 */
export type FileCheck = 'intact' | 'missing' | 'altered' | 'touched';

/** What the ledger recorded of a saved file. */
export interface RecordedFile {
  bytes: number;
  sha256: string;
  /** Whole ms; null when the file was saved before mediabatch recorded it. */
  mtimeMs: number | null;
}

/** What one stat saw: null when there is no file (nothing, or a folder). */
export interface SeenFile {
  size: number;
  mtimeMs: number;
}

export interface FileJudgement {
  check: FileCheck;
  /** Why, in words, for a file that is not intact ('' when intact). */
  detail: string;
}

const INTACT: FileJudgement = { check: 'intact', detail: '' };

/** The rule itself, pure: `sha256` is the content's hash when it was read (`--verify`). */
export function judgeFile(recorded: RecordedFile, seen: SeenFile | null, sha256?: string): FileJudgement {
  if (seen === null) return { check: 'missing', detail: 'no file at this path' };
  if (seen.size !== recorded.bytes)
    return { check: 'altered', detail: `${seen.size} bytes, ${recorded.bytes} when saved` };
  if (sha256 !== undefined)
    return sha256 === recorded.sha256
      ? INTACT
      : { check: 'altered', detail: 'same size, but its SHA-256 differs from the one recorded when saved' };
  // Recorded in whole ms. A time set back to that ms (utimes, a restore) reads back as a double that
  // can fall a hair below it, so only a difference of a whole ms or more counts as a change.
  if (recorded.mtimeMs !== null && Math.abs(seen.mtimeMs - recorded.mtimeMs) >= 1)
    return {
      check: 'touched',
      detail: 'modified since it was saved (same size, content not read: `verify` compares its SHA-256)',
    };
  return INTACT;
}

/**
 * One saved file checked now: a stat, and with `verify` a read of its content. Synchronous, as
 * `status` is: a stat is a few microseconds, and 100,000 of them cost less than the round trips
 * of promises would (docs/performance.md).
 */
export function checkSavedFile(path: string, recorded: RecordedFile, verify: boolean): FileJudgement {
  const info = statSync(path, { throwIfNoEntry: false });
  const seen = info?.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : null;
  if (seen === null || seen.size !== recorded.bytes || !verify) return judgeFile(recorded, seen);
  return judgeFile(recorded, seen, sha256Sync(path));
}

const CHUNK = 1 << 20;

/** A file's SHA-256, read a megabyte at a time; '' when it cannot be read (then it differs). */
function sha256Sync(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (
      let read = readSync(fd, buffer, 0, CHUNK, null);
      read > 0;
      read = readSync(fd, buffer, 0, CHUNK, null)
    )
      hash.update(buffer.subarray(0, read));
    return hash.digest('hex');
  } catch {
    return '';
  } finally {
    closeSync(fd);
  }
}
