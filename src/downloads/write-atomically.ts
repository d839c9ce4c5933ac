import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TEMP_SUFFIX } from './save-file.js';

/**
 * Writes a small file the way downloads are written: a temporary name beside the target (one a
 * re-run sweeps up), fsync, rename into place, fsync the folder. A crash leaves the old file or the
 * whole new one, never a torn one.
 */
export async function writeFileAtomically(path: string, content: string | Uint8Array): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  try {
    const handle = await open(temp, 'w', 0o644);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw Object.assign(new Error(`cannot write ${basename(path)}: ${(error as Error).message}`), {
      code: (error as { code?: unknown }).code,
    });
  }
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
