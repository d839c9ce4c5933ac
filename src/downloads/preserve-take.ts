import { lstatSync } from 'node:fs';
import { link, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sidecarPathFor } from './sidecar.js';
import { fileMatches } from './verify-file.js';

/** `clip.mp4` as take 1 -> `clip.take1.mp4` (and `clip.mp4` with no extension -> `clip.take1`). */
export function takePath(path: string, take: number): string {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? `${path.slice(0, dot)}.take${take}${path.slice(dot)}` : `${path}.take${take}`;
}

/**
 * Keeps an earlier take under its take name before a new take replaces its file, by a hard link:
 * both names hold the old take until the new file is renamed over the first one, so a crash at
 * any step loses nothing, and doing it again is harmless. A different file already under the take
 * name is never overwritten (that is an error). Returns false when there was no file to keep.
 */
export async function preserveEarlierFile(
  current: string,
  kept: string,
  expected: { bytes: number; sha256: string },
): Promise<boolean> {
  for (const [from, to, check] of [
    [current, kept, true],
    [sidecarPathFor(current), sidecarPathFor(kept), false],
  ] as const) {
    try {
      await link(from, to);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'ENOENT') {
        if (check) return false;
        continue;
      }
      if (code !== 'EEXIST') throw error;
      if (check && !(await fileMatches(to, expected.bytes, expected.sha256)))
        throw Object.assign(new Error(`refusing to overwrite ${to}: it is not the earlier take`), {
          code: 'EEXIST',
        });
    }
  }
  const folder = await open(dirname(kept), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return true;
}

/**
 * Refuses to put a new file over one this ledger did not write (another program's, a batch run
 * before folders had owners, a file the user put there): paid outputs and the user's files are
 * never overwritten. A file holding exactly the new bytes loses nothing and is replaced (a lost
 * ledger rebuilt by `import` saves the same outputs again). The existence check is a plain system
 * call, not a thread-pool trip: it runs before every placed file and almost always finds nothing.
 */
export async function refuseForeignFile(
  target: string,
  written: { bytes: number; sha256: string },
  writtenByLedger: (path: string) => Promise<boolean>,
): Promise<void> {
  try {
    // A folder in the way is not a file to lose: the rename fails on it and says so (EISDIR).
    if (lstatSync(target).isDirectory()) return;
  } catch {
    return; // nothing there (or nothing we could read as in the way: the rename will say)
  }
  if ((await writtenByLedger(target)) || (await fileMatches(target, written.bytes, written.sha256))) return;
  throw Object.assign(
    new Error(
      `refusing to overwrite ${target}: this ledger did not write it; move it elsewhere (or change output.dir), then run again`,
    ),
    { code: 'EEXIST' },
  );
}
