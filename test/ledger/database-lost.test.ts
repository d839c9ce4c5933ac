import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseError, DatabaseLostError } from '../../src/errors.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { type OpenLedgerOptions, openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { all, newAttempt } from '../support/ledger-fixtures.js';
import { postgresCanRestart, skipPostgresTests, usePostgresServer } from '../support/postgres-server.js';
import { closedPort, mutePort, startTcpProxy } from '../support/tcp-proxy.js';
import { tempDir } from '../support/temp.js';

/**
 * A shared ledger's database that is not there, goes away, or never answers (docs/shared-ledger.md,
 * "A lost database"): against a real server stopped and started again, and real sockets that
 * refuse or say nothing.
 */

/** What `promise` rejected with, and after how long. */
async function failure(promise: Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = Date.now();
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (reason: unknown) => reason as Error,
  );
  return { error, ms: Date.now() - started };
}

const open = (url: string, options: OpenLedgerOptions = {}): Promise<Ledger> =>
  openLedger(postgresLocation(url, {}), 'b', join(tempDir('mediabatch-lost-'), 'm.yaml'), options);

describe.skipIf(skipPostgresTests)('a shared ledger whose database is not there', () => {
  const postgres = usePostgresServer();

  it('fails within 10 s, naming the host and port, where nothing listens', async () => {
    const port = await closedPort();
    const { error, ms } = await failure(
      open(`postgres://u:p@127.0.0.1:${port}/db`, { reconnectWithinMs: 60_000 }),
    );
    expect(error).toBeInstanceOf(DatabaseLostError);
    expect(error.message).toMatch(new RegExp(`could not connect to 127\\.0\\.0\\.1:${port}`));
    expect(ms).toBeLessThan(10_000);
  });

  it('fails within 10 s where the host takes the connection and never answers', async () => {
    const mute = await mutePort();
    try {
      const url = `postgres://u:secret-pw@127.0.0.1:${mute.port}/db`;
      const { error, ms } = await failure(open(url, { reconnectWithinMs: 60_000 }));
      expect(error).toBeInstanceOf(DatabaseLostError);
      expect(error.message).toMatch(new RegExp(`could not connect to 127\\.0\\.0\\.1:${mute.port}`));
      expect(error.message).not.toContain('secret-pw');
      expect(ms).toBeLessThan(10_000);
    } finally {
      await mute.close();
    }
  }, 15_000);

  it('says where to put a password the server asks for and none was given', async () => {
    const saved = process.env.PGPASSWORD;
    delete process.env.PGPASSWORD;
    try {
      const url = new URL(await postgres.server.createDatabase('nopassword'));
      url.password = '';
      const { error } = await failure(open(url.href));
      expect(error).toBeInstanceOf(DatabaseError);
      expect(error.message).toMatch(/set PGPASSWORD, or put the password in the URL/);
      expect(error.message).not.toContain(postgres.server.password);
    } finally {
      if (saved !== undefined) process.env.PGPASSWORD = saved;
    }
  });

  it('reads a fresh, empty database opened read-only as a batch not created yet', async () => {
    const ledger = await open(await postgres.server.createDatabase('fresh'), { readonly: true });
    try {
      expect(ledger.batchId).toBe(-1);
      expect(await ledger.listItems()).toEqual([]);
      expect(await ledger.listAttempts()).toEqual([]);
      expect(await ledger.listFiles()).toEqual([]);
      expect(await ledger.hasAttempts()).toBe(false);
      expect(await all(ledger.itemSummaries())).toEqual([]);
      expect(await all(ledger.itemEntries())).toEqual([]);
      expect(await all(ledger.itemExports(['a']))).toEqual([]);
      expect(await all(ledger.savedFileFacts())).toEqual([]);
      expect(await all(ledger.itemFilePaths())).toEqual([]);
      expect(await ledger.paidItemsNotIn([])).toEqual([]);
      expect(await ledger.priceSamples()).toEqual([]);
      expect(await ledger.unsavedSucceeded()).toEqual([]);
      expect(await ledger.keepers()).toEqual([]);
      expect(await ledger.savedTakes()).toEqual([]);
      expect(await ledger.service()).toBeNull();
      expect(await ledger.lastRun()).toBeNull();
      expect(await ledger.liveRuns()).toBe(0);
      expect(await ledger.moneyTotals()).toEqual({ chargedMicros: 0, refundedMicros: 0, reservedMicros: 0 });
      expect(await ledger.definitions!.current()).toBeNull();
      await expect(ledger.dumpBatch()).rejects.toThrow(/records no such batch/);
    } finally {
      await ledger.close();
    }
  });
});

describe.skipIf(skipPostgresTests || !postgresCanRestart)('a shared ledger whose database goes away', () => {
  const postgres = usePostgresServer();
  let url: string;

  beforeEach(async () => {
    await postgres.server.startServer();
    url = await postgres.server.createDatabase('lost');
  });
  afterAll(async () => {
    await postgres.server.startServer();
  });

  it('waits for it, says so once, and runs the step that was cut off once it is back', async () => {
    const waits: number[] = [];
    const ledger = await open(url, { reconnectWithinMs: 30_000, onWaiting: (ms) => waits.push(ms) });
    try {
      await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
      await postgres.server.stopServer();
      const step = ledger.prepareAttempt(newAttempt('a', 1));
      const after = ledger.listAttempts();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await postgres.server.startServer();
      expect((await step).itemId).toBe('a');
      // The read called after it waited its turn, and sees it.
      expect((await after).map((attempt) => attempt.idempotencyKey)).toEqual(['a.1']);
      expect(waits).toEqual([30_000]);
    } finally {
      await ledger.close();
    }
  }, 60_000);

  it('says the wait once per outage: a step after the give-up fails at once, unsaid; one after it is back waits anew', async () => {
    const waits: number[] = [];
    const ledger = await open(url, { reconnectWithinMs: 1_500, onWaiting: (ms) => waits.push(ms) });
    try {
      await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
      await postgres.server.stopServer();
      expect((await failure(ledger.listItems())).error).toBeInstanceOf(DatabaseLostError);
      // What a stopping run still does (its leases, its end): the same outage, not a new wait.
      const after = await failure(ledger.liveRuns());
      expect(after.error).toBeInstanceOf(DatabaseLostError);
      expect(after.ms).toBeLessThan(1_000);
      expect(waits).toEqual([1_500]);
      await postgres.server.startServer();
      expect(await ledger.listItems()).toHaveLength(1);
      await postgres.server.stopServer();
      expect((await failure(ledger.listItems())).ms).toBeGreaterThanOrEqual(1_400);
      expect(waits).toEqual([1_500, 1_500]);
    } finally {
      await ledger.close();
    }
  }, 60_000);

  it('gives up after reconnectWithinMs with a DatabaseLostError, and closes at once', async () => {
    const ledger = await open(url, { reconnectWithinMs: 1_500 });
    await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    await postgres.server.stopServer();
    const { error, ms } = await failure(ledger.listItems());
    expect(error).toBeInstanceOf(DatabaseLostError);
    expect(error.message).toMatch(/stopped answering/);
    expect(ms).toBeGreaterThanOrEqual(1_400);
    expect(ms).toBeLessThan(5_000);
    const closing = Date.now();
    await ledger.close();
    expect(Date.now() - closing).toBeLessThan(1_500);
  }, 30_000);

  it('closes within about a second when the database stops answering altogether', async () => {
    const proxy = await startTcpProxy(postgres.server.port);
    try {
      const through = new URL(url);
      through.port = String(proxy.port);
      const ledger = await open(through.href, { reconnectWithinMs: 1_000 });
      await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
      proxy.silence();
      const closing = Date.now();
      await ledger.close();
      expect(Date.now() - closing).toBeLessThan(2_000);
    } finally {
      await proxy.close();
    }
  });
});
