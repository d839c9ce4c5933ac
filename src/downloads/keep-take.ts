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
export async function keepEarlierFile(
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
