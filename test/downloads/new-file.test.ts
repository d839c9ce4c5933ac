import { closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fsyncDescriptor, NewFile } from '../../src/downloads/new-file.js';
import { openDescriptors } from '../support/disk-trace.js';
import { tempDir } from '../support/temp.js';

describe('NewFile', () => {
  it('writes every chunk in order, replaces what was there, and closes once', async () => {
    const path = join(tempDir(), 'a.bin');
    writeFileSync(path, 'an older and longer content');
    const before = openDescriptors();
    const file = await NewFile.create(path);
    expect(openDescriptors()).toBe(before + 1);
    const big = Buffer.alloc(64 * 1024, 7);
    await file.write(Buffer.from('head:'));
    await file.write(big);
    await file.sync();
    file.close();
    expect(openDescriptors()).toBe(before);
    file.close();
    expect(openDescriptors()).toBe(before);
    expect(readFileSync(path)).toEqual(Buffer.concat([Buffer.from('head:'), big]));
    expect(statSync(path).mode & 0o777).toBe(0o644 & ~process.umask());
  });

  it('fails to create a file in a folder that does not exist', async () => {
    await expect(NewFile.create(join(tempDir(), 'missing', 'a.bin'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('syncs through fsync(2): a device that cannot be synced says so', async () => {
    // /dev/null has no fsync: the kernel answers EINVAL, so the call is seen to reach the system.
    const file = await NewFile.create('/dev/null');
    try {
      await expect(file.sync()).rejects.toMatchObject({ code: 'EINVAL', syscall: 'fsync' });
    } finally {
      file.close();
    }
  });

  it('fails a write or a sync on a closed file instead of losing it silently', async () => {
    const path = join(tempDir(), 'a.bin');
    const file = await NewFile.create(path);
    file.close();
    await expect(file.write(Buffer.from('late'))).rejects.toMatchObject({ code: 'EBADF' });
    await expect(file.sync()).rejects.toMatchObject({ code: 'EBADF' });
    expect(readFileSync(path)).toEqual(Buffer.alloc(0));
  });
});

describe('fsyncDescriptor', () => {
  it('fsyncs the descriptor it is given, and fails for one that is not open', async () => {
    const device = openSync('/dev/null', 'r');
    const regular = openSync(join(tempDir(), 'a.bin'), 'w');
    try {
      await expect(fsyncDescriptor(device)).rejects.toMatchObject({ code: 'EINVAL', syscall: 'fsync' });
      await expect(fsyncDescriptor(regular)).resolves.toBeUndefined();
    } finally {
      closeSync(device);
      closeSync(regular);
    }
    await expect(fsyncDescriptor(regular)).rejects.toMatchObject({ code: 'EBADF', syscall: 'fsync' });
  });
});
