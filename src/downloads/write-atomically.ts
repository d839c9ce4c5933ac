import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { NewFile } from './new-file.js';
import { TEMP_SUFFIX } from './save-file.js';
import { syncFolder } from './sync-folder.js';

/**
 * Writes a small file the way downloads are written: a temporary name beside the target (one a
 * re-run sweeps up), fsync, rename into place, fsync the folder. A crash leaves the old file or the
 * whole new one, never a torn one. With `syncFolder: false` the caller fsyncs the folder. Every
 * file mediabatch writes whole (sidecars, the gallery page, an export) goes through here.
 */
export async function writeFileAtomically(
  path: string,
  content: string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
  options: { syncFolder?: boolean; makeFolder?: boolean } = {},
): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  try {
    const file = options.makeFolder === false ? await NewFile.create(temp) : await createMakingFolder(temp);
    try {
      if (typeof content === 'string') await file.write(Buffer.from(content));
      else if (content instanceof Uint8Array) await file.write(content);
      // A long document (an export, the gallery) is written as it is made, a chunk at a time.
      else
        for await (const chunk of content)
          await file.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      await file.sync();
    } finally {
      file.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp).catch(() => undefined);
    throw Object.assign(new Error(`cannot write ${basename(path)}: ${(error as Error).message}`), {
      code: (error as { code?: unknown }).code,
    });
  }
  if (options.syncFolder !== false) await syncFolder(dir);
}

/**
 * Creates a new file, making its folder only when the open finds none: a sidecar goes beside a
 * file just saved, so a mkdir before every write would almost always be one file operation spent.
 */
async function createMakingFolder(path: string): Promise<NewFile> {
  try {
    return await NewFile.create(path);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
    await mkdir(dirname(path), { recursive: true });
    return await NewFile.create(path);
  }
}

/**
 * Writes a folder of files the same way: filled under a temporary name beside it (`fill` writes
 * into the folder it is given), then renamed into place, so a reader finds the whole folder or
 * none. `replace`: an earlier folder there is set aside first and removed once the new one is in
 * place (the caller has made sure it is one of its own); an empty folder is replaced by the rename.
 */
export async function writeFolderAtomically(
  dir: string,
  fill: (temp: string) => Promise<void>,
  replace: boolean,
): Promise<void> {
  const beside = (what: string) =>
    join(dirname(dir), `.${basename(dir)}.${what}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const temp = beside('new');
  try {
    await mkdir(temp, { recursive: true });
    await fill(temp);
    const earlier = replace ? beside('old') : null;
    if (earlier !== null) await rename(dir, earlier);
    await rename(temp, dir);
    if (earlier !== null) await rm(earlier, { recursive: true, force: true });
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
  await syncFolder(dirname(dir));
}
