import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { NewFile } from './new-file.js';
import { errorCode, TEMP_SUFFIX } from './save-file.js';
import { syncFolder } from './sync-folder.js';

export type ProbeOutcome =
  | { ok: true; freeBytes: number }
  /** `step` names what failed; `code` is its errno code (EROFS, ENOSPC, ...), when it has one. */
  | { ok: false; step: string; code: string | null; reason: string }
  | { ok: false; step: 'free space'; code: 'ENOSPC'; freeBytes: number; reason: string };

/** What the probe writes: one block, enough to reach the disk without costing a full disk's last bytes. */
const PROBE_BYTES = 4096;

/**
 * Whether `folder` can take a file the way a download is saved: create it, write a block, fsync
 * it, rename it, fsync the folder, and remove it; then whether the space free to us covers
 * `neededBytes`. The probe file carries the temporary suffix, so a crash between its steps leaves
 * nothing the next run does not clean up.
 */
export async function probeFolder(folder: string, neededBytes: number): Promise<ProbeOutcome> {
  const name = `.probe-${randomBytes(6).toString('hex')}`;
  const first = join(folder, `${name}${TEMP_SUFFIX}`);
  const second = join(folder, `${name}.renamed${TEMP_SUFFIX}`);
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['create the folder', () => mkdir(folder, { recursive: true })],
    ['write a file', () => writeSynced(first)],
    ['rename a file', () => rename(first, second)],
    ['sync the folder', () => syncFolder(folder)],
    ['remove a file', () => rm(second)],
  ];
  for (const [step, run] of steps) {
    try {
      await run();
    } catch (error) {
      await Promise.all([first, second].map((path) => rm(path, { force: true }).catch(() => undefined)));
      const reason = error instanceof Error ? error.message : String(error);
      return { ok: false, step, code: errorCode(error) ?? null, reason };
    }
  }
  const stats = await statfs(folder);
  // bavail, not bfree: the blocks a process without root's reserve may use.
  const freeBytes = Number(stats.bavail) * Number(stats.bsize);
  if (freeBytes >= neededBytes) return { ok: true, freeBytes };
  return { ok: false, step: 'free space', code: 'ENOSPC', freeBytes, reason: 'not enough free space' };
}

async function writeSynced(path: string): Promise<void> {
  const file = await NewFile.create(path);
  try {
    await file.write(Buffer.alloc(PROBE_BYTES));
    await file.sync();
  } finally {
    file.close();
  }
}
