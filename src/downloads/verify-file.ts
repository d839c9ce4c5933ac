import { createHash } from 'node:crypto';
import { readFileSync, type Stats, statSync } from 'node:fs';
import { type FileHandle, open, readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { TEMP_SUFFIX } from './save-file.js';

/** True when the file exists with exactly the recorded size and SHA-256. */
export async function fileMatches(path: string, bytes: number, sha256: string): Promise<boolean> {
  return (await savedFileState(path, bytes, sha256)) === 'intact';
}

/**
 * What a re-run finds of a saved file, content read: nothing (or a folder) there, other bytes,
 * or exactly the recorded size and SHA-256; a run tells the user which (restore.ts).
 */
export async function savedFileState(
  path: string,
  bytes: number,
  sha256: string,
): Promise<'intact' | 'missing' | 'altered'> {
  let info: Stats | undefined;
  try {
    info = statSync(path, { throwIfNoEntry: false });
  } catch {
    return 'missing';
  }
  if (!info?.isFile()) return 'missing';
  if (info.size !== bytes) return 'altered';
  const content = bytes <= SMALL_FILE ? smallFileSha256(path) : await sha256Of(path, bytes);
  return content === sha256 ? 'intact' : 'altered';
}

/**
 * Files up to this size are stat'ed and read synchronously: a re-run checks every saved file,
 * and for a small one the promises' round trips through the thread pool cost more than the read
 * (docs/performance.md); a large one is read a chunk at a time without holding the loop.
 */
const SMALL_FILE = 1 << 20;

/** A small file's SHA-256; '' when it cannot be read (then it differs). */
function smallFileSha256(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch {
    return '';
  }
}

/** Read at most this much at a time. */
const READ_CHUNK = 1 << 20;

/**
 * A file's SHA-256, read through one handle into one buffer sized to it: a re-run reads every
 * saved file, and a stream per file (its buffers, ticks and a read to find the end) cost more than
 * the reading of 10,000 small ones (docs/performance.md). '' when it cannot be read.
 */
async function sha256Of(path: string, size: number): Promise<string> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return '';
  }
  try {
    const hash = createHash('sha256');
    // One byte more than the file: a read that does not fill it has reached the end (a regular
    // file reads short only there), so a small file is one read, and one that grew still differs.
    const buffer = Buffer.allocUnsafe(Math.min(size + 1, READ_CHUNK));
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      hash.update(buffer.subarray(0, bytesRead));
      if (bytesRead < buffer.length) break;
    }
    return hash.digest('hex');
  } catch {
    return '';
  } finally {
    await handle.close();
  }
}

/**
 * Removes temporary files a crashed run left in the output folder and its subfolders (output.name
 * can place files in folders); returns how many.
 */
export async function removeTempFiles(dir: string, idleMs?: number): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir, { recursive: true });
  } catch {
    return 0;
  }
  const temps = names.filter((name) => basename(name).startsWith('.') && name.endsWith(TEMP_SUFFIX));
  const idle = await Promise.all(temps.map((name) => idleFor(join(dir, name), idleMs)));
  const stale = temps.filter((_, index) => idle[index]);
  await Promise.all(stale.map((name) => rm(join(dir, name), { force: true })));
  return stale.length;
}

/** Whether nothing has written to `path` for `idleMs` (always, without a limit); gone: no. */
async function idleFor(path: string, idleMs: number | undefined): Promise<boolean> {
  if (idleMs === undefined) return true;
  try {
    return Date.now() - (await stat(path)).mtimeMs >= idleMs;
  } catch {
    return false;
  }
}
