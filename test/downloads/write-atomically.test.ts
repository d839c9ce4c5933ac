import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomically } from '../../src/downloads/write-atomically.js';
import { openDescriptors, traceDisk } from '../support/disk-trace.js';
import { tempDir } from '../support/temp.js';

/** The steps of one atomic write, with the temporary name it used replaced by `TEMP`. */
function steps(log: string[], dir: string): string[] {
  const temp = new RegExp(`${dir}/\\.[0-9a-f]{12}\\.mbtmp`, 'g');
  return log.map((line) => line.replace(temp, 'TEMP'));
}

describe('writeFileAtomically', () => {
  it('writes a hidden temporary file, fsyncs it, renames it into place, then fsyncs the folder', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'clip.json');
    const before = openDescriptors();
    const log = await traceDisk(() => writeFileAtomically(path, '{"take":1}\n'));
    expect(openDescriptors()).toBe(before);
    expect(steps(log, dir)).toEqual(['fsync TEMP', `rename TEMP -> ${path}`, `fsync ${dir}`]);
    expect(readFileSync(path, 'utf8')).toBe('{"take":1}\n');
    expect(readdirSync(dir)).toEqual(['clip.json']);
  });

  it('writes bytes as they are, and replaces an older file whole', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'a.bin');
    writeFileSync(path, 'an older, longer content');
    const bytes = Uint8Array.from([0, 255, 10, 13, 7]);
    await writeFileAtomically(path, bytes);
    expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
  });

  it('leaves the folder fsync to the caller when told to', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'clip.json');
    const log = await traceDisk(() => writeFileAtomically(path, 'x', { syncFolder: false }));
    expect(steps(log, dir)).toEqual(['fsync TEMP', `rename TEMP -> ${path}`]);
  });

  it('makes a missing folder, and only then', async () => {
    const dir = realpathSync(tempDir());
    const path = join(dir, 'deep', 'er', 'clip.json');
    await writeFileAtomically(path, 'x');
    expect(readFileSync(path, 'utf8')).toBe('x');
    expect(readdirSync(join(dir, 'deep', 'er'))).toEqual(['clip.json']);
  });

  it('fails naming the file and keeping the system code, and leaves no temporary file', async () => {
    const dir = realpathSync(tempDir());
    mkdirSync(join(dir, 'clip.json'));
    writeFileSync(join(dir, 'clip.json', 'inside'), 'x');
    const before = openDescriptors();
    const log = await traceDisk(async () => {
      await expect(writeFileAtomically(join(dir, 'clip.json'), 'x')).rejects.toMatchObject({
        message: expect.stringMatching(/^cannot write clip\.json: .*(EISDIR|ENOTEMPTY|EEXIST)/),
        code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/),
      });
    });
    // No rename happened, so no folder fsync either: nothing new is there to make durable.
    expect(steps(log, dir)).toEqual(['fsync TEMP']);
    expect(openDescriptors()).toBe(before);
    expect(readdirSync(dir)).toEqual(['clip.json']);
  });

  it('passes on a folder it cannot make', async () => {
    const dir = realpathSync(tempDir());
    writeFileSync(join(dir, 'file'), 'x');
    await expect(writeFileAtomically(join(dir, 'file', 'clip.json'), 'x')).rejects.toMatchObject({
      message: expect.stringMatching(/^cannot write clip\.json: .*ENOTDIR/),
      code: 'ENOTDIR',
    });
    await expect(writeFileAtomically(join(dir, 'file', 'sub', 'clip.json'), 'x')).rejects.toMatchObject({
      code: 'ENOTDIR',
    });
    expect(readdirSync(dir)).toEqual(['file']);
  });
});
