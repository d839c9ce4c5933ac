import { describe, expect, it } from 'vitest';
import { folderSyncer, fsyncPath, syncFolder } from '../../src/downloads/sync-folder.js';
import { openDescriptors } from '../support/disk-trace.js';
import { tempDir } from '../support/temp.js';

/** An fsync that records when each call begins and ends only when the test says so. */
function controlledFsync() {
  const log: string[] = [];
  const pending: Array<{ path: string; end: (error?: Error) => void }> = [];
  const fsync = (path: string) =>
    new Promise<void>((resolve, reject) => {
      log.push(`begin ${path}`);
      pending.push({
        path,
        end: (error) => {
          log.push(`end ${path}`);
          if (error) reject(error);
          else resolve();
        },
      });
    });
  /** Ends the oldest fsync still running, then lets every promise reaction run. */
  const endOne = async (error?: Error) => {
    pending.shift()!.end(error);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { log, fsync, endOne, running: () => pending.length };
}

/** Settles into 'done' or the error's message, so a test can read where each caller stands. */
function track(promise: Promise<void>): { state: string } {
  const tracked = { state: 'waiting' };
  promise.then(
    () => {
      tracked.state = 'done';
    },
    (error: Error) => {
      tracked.state = error.message;
    },
  );
  return tracked;
}

describe('folderSyncer', () => {
  it('gives a caller alone its own fsync at once', async () => {
    const disk = controlledFsync();
    const sync = folderSyncer(disk.fsync);
    const first = track(sync('/out'));
    expect(disk.log).toEqual(['begin /out']);
    await disk.endOne();
    expect(first.state).toBe('done');
  });

  it('lets every caller that comes while an fsync runs share one that begins after it', async () => {
    const disk = controlledFsync();
    const sync = folderSyncer(disk.fsync);
    const first = track(sync('/out'));
    const later = [track(sync('/out')), track(sync('/out')), track(sync('/out'))];
    // The running fsync may have begun before their renames: none of them is done with it.
    await disk.endOne();
    expect(first.state).toBe('done');
    expect(later.map((caller) => caller.state)).toEqual(['waiting', 'waiting', 'waiting']);
    expect(disk.log).toEqual(['begin /out', 'end /out', 'begin /out']);
    // A caller while the shared one runs waits for a third.
    const last = track(sync('/out'));
    await disk.endOne();
    expect(later.map((caller) => caller.state)).toEqual(['done', 'done', 'done']);
    expect(last.state).toBe('waiting');
    await disk.endOne();
    expect(last.state).toBe('done');
    expect(disk.log).toEqual(['begin /out', 'end /out', 'begin /out', 'end /out', 'begin /out', 'end /out']);
  });

  it('syncs different folders independently', async () => {
    const disk = controlledFsync();
    const sync = folderSyncer(disk.fsync);
    track(sync('/a'));
    track(sync('/b'));
    expect(disk.log).toEqual(['begin /a', 'begin /b']);
  });

  it('fails the callers of a failed fsync, and still begins the next one for those waiting', async () => {
    const disk = controlledFsync();
    const sync = folderSyncer(disk.fsync);
    const first = track(sync('/out'));
    const second = track(sync('/out'));
    await disk.endOne(new Error('EIO'));
    expect(first.state).toBe('EIO');
    expect(second.state).toBe('waiting');
    expect(disk.running()).toBe(1);
    await disk.endOne();
    expect(second.state).toBe('done');
    // Nothing is left running or waiting: the next caller begins at once.
    track(sync('/out'));
    expect(disk.running()).toBe(1);
  });
});

describe('fsyncPath', () => {
  it('fsyncs what the path names, and closes it again', async () => {
    const before = openDescriptors();
    await expect(fsyncPath(tempDir())).resolves.toBeUndefined();
    // /dev/null has no fsync: the kernel's EINVAL shows the call reached the system.
    await expect(fsyncPath('/dev/null')).rejects.toMatchObject({ code: 'EINVAL', syscall: 'fsync' });
    expect(openDescriptors()).toBe(before);
  });

  it('fails for a folder that is not there', async () => {
    await expect(fsyncPath(`${tempDir()}/gone`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('syncFolder', () => {
  it('is the shared fsync of real folders', async () => {
    await expect(syncFolder(tempDir())).resolves.toBeUndefined();
    await expect(syncFolder('/dev/null')).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
