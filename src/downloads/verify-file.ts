import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
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
  try {
    const info = await stat(path);
    if (!info.isFile()) return 'missing';
    if (info.size !== bytes) return 'altered';
  } catch {
    return 'missing';
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex') === sha256 ? 'intact' : 'altered';
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
