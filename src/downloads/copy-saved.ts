import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TEMP_SUFFIX } from './save-file.js';
import { syncFolder } from './sync-folder.js';
import { savedFileState } from './verify-file.js';

/**
 * A saved take copied to another name (runner/reuse-takes.ts: the take answers another item's
 * request). A copy, not a link: each name is a file of its own, so editing one never changes the
 * other. Written under a temporary name, its bytes checked against the take's SHA-256, synced,
 * then renamed into place: the name holds the whole verified take or what it held before. The
 * caller has already refused a file the ledger did not write there and kept an earlier take.
 * Returns the copy's modification time, as the ledger records a saved file's.
 */
export async function copySavedFile(
  from: string,
  to: string,
  expected: { bytes: number; sha256: string },
): Promise<{ mtimeMs: number }> {
  await mkdir(dirname(to), { recursive: true });
  const temp = join(dirname(to), `.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  try {
    // A clone where the file system can (no bytes copied), a plain copy where it cannot.
    await copyFile(from, temp, constants.COPYFILE_FICLONE);
    const state = await savedFileState(temp, expected.bytes, expected.sha256);
    if (state !== 'intact')
      throw Object.assign(new Error(`${from} is not the saved take any more (${state})`), {
        code: 'EALTERED',
      });
    const file = await open(temp, 'r+');
    try {
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, to);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncFolder(dirname(to));
  return { mtimeMs: Math.trunc((await stat(to)).mtimeMs) };
}
