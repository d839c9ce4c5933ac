import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { NewFile } from './new-file.js';
import { TEMP_SUFFIX } from './save-file.js';
import { syncFolder } from './sync-folder.js';
import { fileMatches } from './verify-file.js';

/**
 * Copies a file to `target` the way a download is placed: under a temporary name beside it,
 * hashed while written, fsynced, checked against the expected size and SHA-256, linked into
 * place (never over a file), the folder fsynced. A file already at `target` is never replaced: one with exactly these
 * bytes is left as it is (`already_there`), any other is refused (code EEXIST), nothing written.
 */
export async function copyVerified(
  source: string,
  target: string,
  expected: { bytes: number; sha256: string },
): Promise<{ kind: 'copied' | 'already_there'; mtimeMs: number }> {
  if (await stat(target).catch(() => null)) {
    if (!(await fileMatches(target, expected.bytes, expected.sha256)))
      throw Object.assign(new Error(`refusing to overwrite ${target}: another file is there`), {
        code: 'EEXIST',
      });
    return { kind: 'already_there', mtimeMs: (await stat(target)).mtimeMs };
  }
  const temp = await verifiedCopyBeside(source, target, expected);
  try {
    // A link, not a rename: a file that appeared at `target` meanwhile is not replaced (EEXIST).
    await link(temp, target);
  } finally {
    await rm(temp, { force: true });
  }
  await syncFolder(dirname(target));
  return { kind: 'copied', mtimeMs: (await stat(target)).mtimeMs };
}

/**
 * The same copy put over `target` (a take reused by another item, runner/reuse-takes.ts, whose
 * earlier file there the caller has already preserved under its take name and checked to be the
 * ledger's): renamed into place, so the name holds the whole verified copy or what it held before.
 * A copy, not a link to the source: editing one file never changes the other.
 */
export async function copyOver(
  source: string,
  target: string,
  expected: { bytes: number; sha256: string },
): Promise<{ mtimeMs: number }> {
  const temp = await verifiedCopyBeside(source, target, expected);
  try {
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncFolder(dirname(target));
  return { mtimeMs: Math.trunc((await stat(target)).mtimeMs) };
}

/** A temporary copy beside `target`, hashed while written and fsynced; removed if it is not the file expected. */
async function verifiedCopyBeside(
  source: string,
  target: string,
  expected: { bytes: number; sha256: string },
): Promise<string> {
  await mkdir(dirname(target), { recursive: true });
  const temp = join(dirname(target), `.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  try {
    await writeCopy(source, temp, expected);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return temp;
}

async function writeCopy(source: string, temp: string, expected: { bytes: number; sha256: string }) {
  const hash = createHash('sha256');
  let bytes = 0;
  const file = await NewFile.create(temp);
  try {
    for await (const chunk of createReadStream(source)) {
      const data = chunk as Buffer;
      hash.update(data);
      bytes += data.length;
      await file.write(data);
    }
    await file.sync();
  } finally {
    file.close();
  }
  if (bytes !== expected.bytes || hash.digest('hex') !== expected.sha256)
    throw new Error(`${source} changed while it was copied: not the file recorded (its size and SHA-256)`);
}
