import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { refuseForeignFile } from '../../src/downloads/preserve-take.js';
import { tempDir } from '../support/temp.js';

const facts = (text: string) => ({
  bytes: Buffer.byteLength(text),
  sha256: createHash('sha256').update(text).digest('hex'),
});

describe('a file the ledger did not write is never overwritten', () => {
  it('lets a new file take a free name, its own earlier file, or a file with the same bytes', async () => {
    const dir = tempDir('foreign-');
    const target = join(dir, 'a.mp4');
    await expect(refuseForeignFile(target, facts('new'), async () => false)).resolves.toBeUndefined();
    writeFileSync(target, 'old take');
    await expect(
      refuseForeignFile(target, facts('new'), async (path) => path === target),
    ).resolves.toBeUndefined();
    await expect(refuseForeignFile(target, facts('old take'), async () => false)).resolves.toBeUndefined();
  });

  it('refuses any other file there, naming it, and leaves it as it was', async () => {
    const dir = tempDir('foreign-');
    const target = join(dir, 'a.mp4');
    writeFileSync(target, 'made by hand');
    await expect(
      refuseForeignFile(target, facts('new'), async (path) => path !== target),
    ).rejects.toMatchObject({
      code: 'EEXIST',
      message: `refusing to overwrite ${target}: this ledger did not write it; move it elsewhere (or change output.dir), then run again`,
    });
    expect(readFileSync(target, 'utf8')).toBe('made by hand');
  });
});
