import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileMatches, removeTempFiles } from '../../src/downloads/verify-file.js';
import { tempDir } from '../support/temp.js';

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

describe('removeTempFiles', () => {
  it('removes only the hidden .mbtmp files a crashed download left, and counts them', async () => {
    const dir = tempDir();
    for (const name of ['.abc.mbtmp', '.def.mbtmp', 'keep.mbtmp', '.keep.mp4', 'a.mp4'])
      writeFileSync(join(dir, name), 'x');
    expect(await removeTempFiles(dir)).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['.keep.mp4', 'a.mp4', 'keep.mbtmp']);
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

  it('answers 0 for a folder that does not exist yet', async () => {
    expect(await removeTempFiles(join(tempDir(), 'none'))).toBe(0);
  });
});
