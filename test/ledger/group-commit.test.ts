import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import { openLedger } from '../../src/ledger/open-ledger.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The ledger file `path`, opened for writing as a run opens it. */
const open = (path: string): Promise<Ledger> =>
  openLedger({ kind: 'sqlite', path, shown: path }, 'group', join(dirname(path), 'm.yaml'));

function tempLedger(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mediabatch-group-'));
  dirs.push(dir);
  return join(dir, 'batch.sqlite');
}

const attempt = (itemId: string) => ({
  itemId,
  seq: 1,
  idempotencyKey: `mb_key_${itemId}`,
  requestBody: `{"input":{"prompt":"${itemId}"}}`,
  requestHash: 'h',
  reservedMicros: 0,
});

const job = {
  status: 'queued',
  amountMicros: 40_000,
  refundedMicros: 0,
  errorCode: null,
  errorMessage: null,
};
const snapshot = (jobId: string) => ({ ...job, jobId, expiresAt: null, completedAt: null });

/** What another process reading the file sees: only what was committed (and synced). */
function committed(path: string): { items: number; attempts: Array<{ item_id: string; state: string }> } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      items: (db.prepare('SELECT COUNT(*) AS n FROM items').get() as { n: number }).n,
      attempts: db.prepare('SELECT item_id, state FROM attempts ORDER BY id').all() as Array<{
        item_id: string;
        state: string;
      }>,
    };
  } finally {
    db.close();
  }
}

describe('ledger group commit', () => {
  it('holds the process open while someone waits for the group to commit', () => {
    // The group's timer is unref'd while nobody waits; a run whose last step waits for the commit
    // with nothing else to do must not see Node exit 0 before it comes.
    const path = tempLedger();
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'commit-waiter.mjs'), path],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('committed\n');
    expect(child.status).toBe(0);
    expect(committed(path).items).toBe(1);
  });

  it('commits an attempt before prepareAttempt returns, taking the waiting redoable steps with it', async () => {
    const path = tempLedger();
    const ledger = await open(path);
    ledger.groupCommits(60_000);
    await ledger.putItems([
      { itemId: 'a', requestHash: 'h', state: 'pending' },
      { itemId: 'b', requestHash: 'h', state: 'pending' },
    ]);
    expect(committed(path).items).toBe(0);

    const first = await ledger.prepareAttempt(attempt('a'));
    expect(committed(path)).toEqual({ items: 2, attempts: [{ item_id: 'a', state: 'prepared' }] });

    await ledger.recordAccepted(first.id, 202, snapshot('job_a'));
    expect((await ledger.getAttempt(first.id)).state).toBe('accepted');
    expect(committed(path).attempts).toEqual([{ item_id: 'a', state: 'prepared' }]);

    const [second] = await ledger.prepareAttempts([attempt('b')]);
    expect(committed(path).attempts).toEqual([
      { item_id: 'a', state: 'accepted' },
      { item_id: 'b', state: 'prepared' },
    ]);
    await ledger.recordAccepted(second!.id, 202, snapshot('job_b'));
    await ledger.close();
    expect(committed(path).attempts.map((row) => row.state)).toEqual(['accepted', 'accepted']);
  });

  it('commits a group on its own within the given time', async () => {
    const path = tempLedger();
    const ledger = await open(path);
    ledger.groupCommits(50);
    await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    expect(committed(path).items).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(committed(path).items).toBe(1);
    await ledger.close();
  });

  it('a failing step inside a group leaves the group and the earlier steps intact', async () => {
    const path = tempLedger();
    const ledger = await open(path);
    ledger.groupCommits(60_000);
    await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    await ledger.prepareAttempt(attempt('a'));
    // The same idempotency key twice breaks a UNIQUE constraint: that step alone is undone.
    await expect(ledger.prepareAttempt({ ...attempt('a'), seq: 2 })).rejects.toThrow(/UNIQUE/);
    await ledger.putItems([{ itemId: 'c', requestHash: 'h', state: 'pending' }]);
    await ledger.close();
    expect(committed(path)).toEqual({ items: 2, attempts: [{ item_id: 'a', state: 'prepared' }] });
  });
});
