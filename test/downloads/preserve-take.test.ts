import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { preserveEarlierFile, takePath } from '../../src/downloads/preserve-take.js';
import { openDescriptors, traceDisk } from '../support/disk-trace.js';
import { tempDir } from '../support/temp.js';

const OLD = Buffer.from('the first take, paid for');
const NEW = Buffer.from('the second take, paid for as well');
const OLD_FACTS = { bytes: OLD.length, sha256: createHash('sha256').update(OLD).digest('hex') };

/** A folder holding the first take `clip.mp4` and, unless told otherwise, its sidecar. */
function firstTake(withSidecar = true): { dir: string; current: string; kept: string } {
  const dir = realpathSync(tempDir());
  writeFileSync(join(dir, 'clip.mp4'), OLD);
  if (withSidecar) writeFileSync(join(dir, 'clip.json'), '{"take":1}\n');
  return { dir, current: join(dir, 'clip.mp4'), kept: join(dir, 'clip.take1.mp4') };
}

describe('takePath', () => {
  it('puts the take before the extension, or at the end when there is none', () => {
    expect(takePath('out/clip.mp4', 1)).toBe('out/clip.take1.mp4');
    expect(takePath('out/clip.v2.webm', 3)).toBe('out/clip.v2.take3.webm');
    expect(takePath('out/clip', 2)).toBe('out/clip.take2');
  });

  it('does not take a dot in a folder name or a leading dot for an extension', () => {
    expect(takePath('out.d/clip', 1)).toBe('out.d/clip.take1');
    expect(takePath('out.d\\clip', 1)).toBe('out.d\\clip.take1');
    expect(takePath('out/.clip', 1)).toBe('out/.clip.take1');
    expect(takePath('.clip', 1)).toBe('.clip.take1');
    expect(takePath('out/a.mp4', 1)).toBe('out/a.take1.mp4');
  });
});

describe('preserveEarlierFile', () => {
  it('keeps the earlier take byte for byte, with its sidecar, through a new take replacing it', async () => {
    const { dir, current, kept } = firstTake();
    expect(await preserveEarlierFile(current, kept, OLD_FACTS)).toBe(true);
    // Both names hold the one file until the new take is renamed over the first name.
    expect(statSync(kept).ino).toBe(statSync(current).ino);
    writeFileSync(join(dir, '.new.mbtmp'), NEW);
    await rename(join(dir, '.new.mbtmp'), current);
    expect(readFileSync(kept)).toEqual(OLD);
    expect(readFileSync(current)).toEqual(NEW);
    expect(readFileSync(join(dir, 'clip.take1.json'), 'utf8')).toBe('{"take":1}\n');
    expect(readdirSync(dir).sort()).toEqual(['clip.json', 'clip.mp4', 'clip.take1.json', 'clip.take1.mp4']);
  });

  it('links the file, then the sidecar, then fsyncs the folder so the new names survive a crash', async () => {
    const { dir, current, kept } = firstTake();
    const before = openDescriptors();
    const log = await traceDisk(() => preserveEarlierFile(current, kept, OLD_FACTS));
    expect(openDescriptors()).toBe(before);
    expect(log).toEqual([
      `link ${current} -> ${kept}`,
      `link ${join(dir, 'clip.json')} -> ${join(dir, 'clip.take1.json')}`,
      `fsync ${dir}`,
    ]);
  });

  it('fsyncs the folder of the kept take, where its new name is', async () => {
    const { dir, current } = firstTake();
    mkdirSync(join(dir, 'takes'));
    const kept = join(dir, 'takes', 'clip.take1.mp4');
    const log = await traceDisk(() => preserveEarlierFile(current, kept, OLD_FACTS));
    expect(log.at(-1)).toBe(`fsync ${join(dir, 'takes')}`);
    expect(readFileSync(kept)).toEqual(OLD);
  });

  it('answers false and makes nothing when there is no earlier file', async () => {
    const dir = realpathSync(tempDir());
    writeFileSync(join(dir, 'clip.json'), 'a sidecar without its file');
    const log = await traceDisk(async () => {
      expect(await preserveEarlierFile(join(dir, 'clip.mp4'), join(dir, 'clip.take1.mp4'), OLD_FACTS)).toBe(
        false,
      );
    });
    expect(log).toEqual([]);
    expect(readdirSync(dir)).toEqual(['clip.json']);
  });

  it('keeps a file that has no sidecar', async () => {
    const { dir, current, kept } = firstTake(false);
    expect(await preserveEarlierFile(current, kept, OLD_FACTS)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['clip.mp4', 'clip.take1.mp4']);
  });

  it('is harmless done again, after a crash between its steps', async () => {
    const { dir, current, kept } = firstTake();
    expect(await preserveEarlierFile(current, kept, OLD_FACTS)).toBe(true);
    expect(await preserveEarlierFile(current, kept, OLD_FACTS)).toBe(true);
    expect(readFileSync(kept)).toEqual(OLD);
    expect(readdirSync(dir)).toHaveLength(4);
  });

  it('never overwrites a different file under the take name', async () => {
    const { dir, current, kept } = firstTake();
    writeFileSync(kept, 'someone else’s file');
    await expect(preserveEarlierFile(current, kept, OLD_FACTS)).rejects.toMatchObject({
      message: `refusing to overwrite ${kept}: it is not the earlier take`,
      code: 'EEXIST',
    });
    expect(readFileSync(kept, 'utf8')).toBe('someone else’s file');
    expect(readdirSync(dir)).not.toContain('clip.take1.json');
  });

  it('leaves a sidecar already under the take name as it is', async () => {
    const { dir, current, kept } = firstTake();
    writeFileSync(join(dir, 'clip.take1.json'), 'written by an earlier try');
    expect(await preserveEarlierFile(current, kept, OLD_FACTS)).toBe(true);
    expect(readFileSync(join(dir, 'clip.take1.json'), 'utf8')).toBe('written by an earlier try');
    expect(readFileSync(kept)).toEqual(OLD);
  });

  it('passes on any other failure of the disk', async () => {
    const { dir, current } = firstTake();
    writeFileSync(join(dir, 'not-a-folder'), 'x');
    await expect(
      preserveEarlierFile(current, join(dir, 'not-a-folder', 'clip.take1.mp4'), OLD_FACTS),
    ).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('passes on a failure to keep the sidecar other than a missing one', async () => {
    const { dir, current, kept } = firstTake(false);
    mkdirSync(join(dir, 'clip.json'));
    // A folder where the sidecar would be: link(2) refuses it with EPERM, which is not ignored.
    await expect(preserveEarlierFile(current, kept, OLD_FACTS)).rejects.toMatchObject({ code: 'EPERM' });
  });
});
