import { readlinkSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
const fs = require('node:fs') as typeof import('node:fs');

/** The path an open descriptor names, from the kernel (Linux). */
function pathOf(fd: number): string {
  return readlinkSync(`/proc/self/fd/${fd}`);
}

/**
 * Records the durability steps the code under test asks of the system while `body` runs: each
 * fsync(2) (by the path of its descriptor), rename(2) and link(2), in the order they were made.
 * Node's own functions are wrapped, not replaced: every call still reaches the disk, so the test
 * sees the real files, and the log proves what a crash test would need a power cut to show.
 * syncBuiltinESMExports makes the `import { fsync } from 'node:fs'` of our modules see the wrapper.
 * `body` may add its own lines with `note`, to show where its hooks ran among the steps.
 */
export async function traceDisk(body: (note: (line: string) => void) => Promise<unknown>): Promise<string[]> {
  const log: string[] = [];
  const handle = await fs.promises.open(import.meta.filename, 'r');
  const FileHandle = Object.getPrototypeOf(handle) as { sync(this: { fd: number }): Promise<void> };
  await handle.close();
  const saved = {
    fsync: fs.fsync,
    rename: fs.promises.rename,
    link: fs.promises.link,
    handleSync: FileHandle.sync,
  };
  fs.fsync = ((fd: number, callback: (error: Error | null) => void) => {
    log.push(`fsync ${pathOf(fd)}`);
    saved.fsync(fd, callback);
  }) as typeof fs.fsync;
  fs.promises.rename = async (from, to) => {
    await saved.rename(from, to);
    log.push(`rename ${String(from)} -> ${String(to)}`);
  };
  fs.promises.link = async (from, to) => {
    await saved.link(from, to);
    log.push(`link ${String(from)} -> ${String(to)}`);
  };
  FileHandle.sync = function (this: { fd: number }) {
    log.push(`fsync ${pathOf(this.fd)}`);
    return saved.handleSync.call(this);
  };
  syncBuiltinESMExports();
  try {
    await body((line) => log.push(line));
  } finally {
    fs.fsync = saved.fsync;
    fs.promises.rename = saved.rename;
    fs.promises.link = saved.link;
    FileHandle.sync = saved.handleSync;
    syncBuiltinESMExports();
  }
  return log;
}

/** How many descriptors this process holds open (Linux): a file left open shows as one more. */
export function openDescriptors(): number {
  return fs.readdirSync('/proc/self/fd').length;
}
