import { describe, expect, it } from 'vitest';
import { fileSystemOf } from '../../../src/commands/run/shared-output-check.js';

describe('the file system of an output folder', () => {
  const mounts = [
    { at: '/', type: 'ext4' },
    { at: '/mnt/team', type: 'nfs4' },
    { at: '/mnt/team/local', type: 'tmpfs' },
    { at: '/mnt/teammate', type: 'xfs' },
  ];

  it('is the one of its longest mount point', () => {
    expect(fileSystemOf('/mnt/team/renders/out', mounts)).toBe('nfs4');
    expect(fileSystemOf('/mnt/team/local/out', mounts)).toBe('tmpfs');
    expect(fileSystemOf('/mnt/team', mounts)).toBe('nfs4');
    expect(fileSystemOf('/home/me/out', mounts)).toBe('ext4');
  });

  it('does not take a mount point for the prefix of a longer name', () => {
    expect(fileSystemOf('/mnt/teammate/out', mounts)).toBe('xfs');
  });

  it('is unknown without mounts', () => {
    expect(fileSystemOf('/anywhere', [])).toBeNull();
  });
});
