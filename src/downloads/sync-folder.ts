import { closeSync, openSync } from 'node:fs';
import { fsyncDescriptor } from './new-file.js';

/**
 * A rename is durable once an fsync of its folder that began after the rename has ended. Every
 * output and every sidecar is renamed into the same folder, so instead of one fsync each (an open,
 * an fsync and a close of the folder, per file) the callers share: a caller joins the next fsync
 * of that folder to start, which covers every rename made before it starts. Alone, a caller gets
 * its own fsync at once; while one runs, everyone who asks waits for the one after it.
 */
export function folderSyncer(fsync: (path: string) => Promise<void>): (path: string) => Promise<void> {
  const folders = new Map<string, FolderSyncs>();
  const start = (path: string, folder: FolderSyncs): Promise<void> => {
    folder.next = null;
    const running = fsync(path).finally(() => {
      folder.running = null;
      if (folder.next === null) folders.delete(path);
    });
    folder.running = running;
    return running;
  };
  return (path) => {
    let folder = folders.get(path);
    if (!folder) {
      folder = { running: null, next: null };
      folders.set(path, folder);
    }
    // The next fsync has not begun yet, so it covers this caller's rename too.
    if (folder.next !== null) return folder.next;
    if (folder.running === null) return start(path, folder);
    // One runs now and may have begun before this caller's rename: wait for the next one.
    const current = folder;
    folder.next = folder.running.then(
      () => start(path, current),
      () => start(path, current),
    );
    return folder.next;
  };
}

/** The fsync running on a folder, and the one that begins when it ends (null until someone asks). */
interface FolderSyncs {
  running: Promise<void> | null;
  next: Promise<void> | null;
}

/**
 * fsync(2) of a folder by path. Only the fsync goes through the thread pool: opening a folder
 * that was just written to finds it in the kernel's caches and closing it does no I/O, and each
 * of them cost 20-30 µs of CPU through the pool against a few µs as a plain system call.
 */
export async function fsyncPath(path: string): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    await fsyncDescriptor(fd);
  } finally {
    closeSync(fd);
  }
}

/** The shared folder fsync of this process (see folderSyncer). */
export const syncFolder = folderSyncer(fsyncPath);
