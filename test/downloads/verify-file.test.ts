import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileMatches, removeTempFiles, savedFileState } from '../../src/downloads/verify-file.js';
import { tempDir } from '../support/temp.js';

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/**
 * Runs `body` with node's own readdir wrapped (not replaced): each listing is returned as it was
 * read, after `hook` has run, so the hook can change the folder between a listing and what follows.
 */
async function afterEachListing(hook: () => void, body: () => Promise<void>): Promise<void> {
  const readdir = fs.promises.readdir;
  fs.promises.readdir = (async (...args: Parameters<typeof readdir>) => {
    const names = await readdir(...args);
    hook();
    return names;
  }) as typeof readdir;
  syncBuiltinESMExports();
  try {
    await body();
  } finally {
    fs.promises.readdir = readdir;
    syncBuiltinESMExports();
  }
}

const BODY = Buffer.from('saved video');
const SHA = createHash('sha256').update(BODY).digest('hex');

describe('fileMatches', () => {
  it('holds for the file with the recorded size and SHA-256', async () => {
    const path = join(tempDir(), 'a.mp4');
    writeFileSync(path, BODY);
    expect(await fileMatches(path, BODY.length, SHA)).toBe(true);
  });

  it('fails for a missing file, a folder, another size or another content of the same size', async () => {
    const dir = tempDir();
    const path = join(dir, 'a.mp4');
    expect(await fileMatches(path, BODY.length, SHA)).toBe(false);
    mkdirSync(path);
    expect(await fileMatches(path, BODY.length, SHA)).toBe(false);
    const other = join(dir, 'b.mp4');
    writeFileSync(other, BODY);
    expect(await fileMatches(other, BODY.length + 1, SHA)).toBe(false);
    writeFileSync(other, Buffer.from('SAVED VIDEO'));
    expect(await fileMatches(other, BODY.length, SHA)).toBe(false);
  });
});

describe('savedFileState', () => {
  it('tells intact, missing and altered apart', async () => {
    const dir = tempDir();
    const path = join(dir, 'a.mp4');
    expect(await savedFileState(path, BODY.length, SHA)).toBe('missing');
    writeFileSync(path, BODY);
    expect(await savedFileState(path, BODY.length, SHA)).toBe('intact');
    expect(await savedFileState(path, BODY.length - 1, SHA)).toBe('altered');
    expect(await savedFileState(path, BODY.length + 1, SHA)).toBe('altered');
    writeFileSync(path, Buffer.from('SAVED VIDEO'));
    expect(await savedFileState(path, BODY.length, SHA)).toBe('altered');
    writeFileSync(path, '');
    expect(await savedFileState(path, BODY.length, SHA)).toBe('altered');
  });

  it('a folder where the file was is missing, whatever size the folder has', async () => {
    const path = join(tempDir(), 'a.mp4');
    mkdirSync(path);
    expect(await savedFileState(path, BODY.length, SHA)).toBe('missing');
    expect(await savedFileState(path, statSync(path).size, SHA)).toBe('missing');
  });
});

describe('removeTempFiles', () => {
  it('removes only the hidden .mbtmp files a crashed download left, and counts them', async () => {
    const dir = tempDir();
    for (const name of ['.abc.mbtmp', '.def.mbtmp', 'keep.mbtmp', '.keep.mp4', 'a.mp4'])
      writeFileSync(join(dir, name), 'x');
    expect(await removeTempFiles(dir)).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['.keep.mp4', 'a.mp4', 'keep.mbtmp']);
  });

  it('with an idle time, leaves what was written to since: another runner may be writing it', async () => {
    const dir = tempDir();
    for (const name of ['.old.mbtmp', '.new.mbtmp', '.edge.mbtmp']) writeFileSync(join(dir, name), 'x');
    const now = Date.now();
    utimesSync(join(dir, '.old.mbtmp'), new Date(now - 120_000), new Date(now - 120_000));
    utimesSync(join(dir, '.edge.mbtmp'), new Date(now - 60_500), new Date(now - 60_500));
    expect(await removeTempFiles(dir, 60_000)).toBe(2);
    expect(readdirSync(dir)).toEqual(['.new.mbtmp']);
    expect(await removeTempFiles(dir)).toBe(1);
  });

  it('looks into subfolders too, where output.name may place files', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'takes', 'night'), { recursive: true });
    writeFileSync(join(dir, 'takes', 'night', '.abc.mbtmp'), 'x');
    writeFileSync(join(dir, 'takes', 'night', 'a.mp4'), 'x');
    writeFileSync(join(dir, 'takes', '.def.mbtmp'), 'x');
    expect(await removeTempFiles(dir)).toBe(2);
    expect(readdirSync(join(dir, 'takes'))).toEqual(['night']);
    expect(readdirSync(join(dir, 'takes', 'night'))).toEqual(['a.mp4']);
  });

  it('does not fail on a temporary file gone between the listing and its removal', async () => {
    const dir = tempDir();
    for (const name of ['.abc.mbtmp', '.def.mbtmp', 'a.mp4']) writeFileSync(join(dir, name), 'x');
    // Another sweep (or the user) removes one first.
    await afterEachListing(
      () => rmSync(join(dir, '.abc.mbtmp'), { force: true }),
      async () => {
        await expect(removeTempFiles(dir)).resolves.toBeGreaterThanOrEqual(1);
      },
    );
    expect(readdirSync(dir)).toEqual(['a.mp4']);
  });

  it('answers 0 for a folder that does not exist yet', async () => {
    expect(await removeTempFiles(join(tempDir(), 'none'))).toBe(0);
  });
});

describe('savedFileState on files of every size', () => {
  const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  it('reads small and large files whole: one byte changed anywhere is altered, the same bytes intact', async () => {
    const dir = tempDir('mediabatch-verify-sizes-');
    try {
      // Below, at and above the 1 MiB a small file is read in one go, and over two 1 MiB chunks.
      for (const size of [0, 1, 1 << 20, (1 << 20) + 1, (2 << 20) + 5]) {
        const bytes = Buffer.alloc(size, 7);
        if (size > 0) bytes[size - 1] = 9;
        const path = join(dir, `f${size}.mp4`);
        writeFileSync(path, bytes);
        expect(await savedFileState(path, size, sha(bytes)), `${size} bytes`).toBe('intact');
        if (size === 0) continue;
        const other = Buffer.from(bytes);
        other[size - 1] = 8;
        writeFileSync(path, other);
        expect(await savedFileState(path, size, sha(bytes)), `${size} bytes, last changed`).toBe('altered');
        other[size - 1] = 9;
        other[0] = 6;
        writeFileSync(path, other);
        expect(await savedFileState(path, size, sha(bytes)), `${size} bytes, first changed`).toBe('altered');
      }
      expect(await savedFileState(join(dir, 'none.mp4'), 1, sha(Buffer.alloc(1)))).toBe('missing');
      expect(await savedFileState(dir, 1, sha(Buffer.alloc(1)))).toBe('missing');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
