import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NewFile } from '../../src/downloads/new-file.js';
import { tempDir } from '../support/temp.js';

describe('NewFile', () => {
  it('writes every chunk in order, replaces what was there, and closes once', async () => {
    const path = join(tempDir(), 'a.bin');
    writeFileSync(path, 'an older and longer content');
    const file = await NewFile.create(path);
    const big = Buffer.alloc(64 * 1024, 7);
    await file.write(Buffer.from('head:'));
    await file.write(big);
    await file.sync();
    file.close();
    file.close();
    expect(readFileSync(path)).toEqual(Buffer.concat([Buffer.from('head:'), big]));
    expect(statSync(path).mode & 0o777).toBe(0o644 & ~process.umask());
  });

  it('fails to create a file in a folder that does not exist', async () => {
    await expect(NewFile.create(join(tempDir(), 'missing', 'a.bin'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
