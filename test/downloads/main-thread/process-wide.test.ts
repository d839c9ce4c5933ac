import { chmodSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimFolder, OWNER_MARKER } from '../../../src/downloads/output-owner.js';
import { downloadToFile } from '../../../src/downloads/save-file.js';
import { tempDir } from '../../support/temp.js';

/**
 * Tests that change what the whole process is: its umask (what mediabatch writes is never writable
 * by others, whatever the umask) and its user (a folder it may not write). Only a process's main
 * thread may do either, so they sit outside the mutation run's unit tests (vitest.unit.config.ts),
 * whose runner uses worker threads; they run in `npm test`.
 */

const BODY = Buffer.from('a small video body, 42 bytes long.........');
const spring = { manifest: 'spring', ledger: '/p/.mediabatch/spring.sqlite', service: 'http://h/v1' };

describe('what mediabatch writes, whatever the process is', () => {
  it('asks with GET, and writes a file nobody else may change even under umask 0', async () => {
    const methods: string[] = [];
    const server = createServer((req, res) => {
      methods.push(req.method ?? '');
      res.end(BODY);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const umask = process.umask(0);
    try {
      const target = join(tempDir(), 'a.mp4');
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/f`;
      expect(await downloadToFile(url, () => target)).toMatchObject({ kind: 'saved', bytes: BODY.length });
      expect(methods).toEqual(['GET']);
      expect(statSync(target).mode & 0o777).toBe(0o644);
    } finally {
      process.umask(umask);
      server.closeAllConnections();
      server.close();
    }
  });

  it('leaves only the marker, readable by all and written by none but its owner even under umask 0', () => {
    const out = join(tempDir('owner-mode-'), 'out');
    const umask = process.umask(0);
    try {
      expect(claimFolder(out, spring, 'now')).toEqual({ kind: 'mine' });
    } finally {
      process.umask(umask);
    }
    expect(readdirSync(out)).toEqual([OWNER_MARKER]);
    expect(statSync(join(out, OWNER_MARKER)).mode & 0o777).toBe(0o644);
  });

  it('passes on a failure to write the marker, with its own cause, and leaves nothing', () => {
    const root = tempDir('owner-fail-');
    // The temporary marker's name leads nowhere: the write fails with ENOENT.
    const lost = join(root, 'lost');
    mkdirSync(lost);
    symlinkSync(join(root, 'no', 'such', 'folder'), join(lost, `.mediabatch-owner.${process.pid}.mbtmp`));
    expect(() => claimFolder(lost, spring, 'now')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(readdirSync(lost)).toEqual([]);
    // A folder its user may not write: EACCES, not the failed clean-up of a file never made.
    const locked = join(root, 'locked');
    mkdirSync(locked);
    chmodSync(root, 0o755);
    chmodSync(locked, 0o555);
    expect(() => asUnprivileged(() => claimFolder(locked, spring, 'now'))).toThrow(
      expect.objectContaining({ code: 'EACCES' }),
    );
    expect(readdirSync(locked)).toEqual([]);
  });
});

/** Runs `act` without root's right to write anywhere (root ignores a folder's permissions). */
function asUnprivileged<T>(act: () => T): T {
  if (process.getuid?.() !== 0) return act();
  process.seteuid!(65534);
  try {
    return act();
  } finally {
    process.seteuid!(0);
  }
}
