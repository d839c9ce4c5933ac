import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import { type LedgerLocation, openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import {
  type PostgresTestServer,
  psql,
  skipPostgresTests,
  startPostgresServer,
} from '../support/postgres-server.js';
import { normalised, richBatch } from './dump-fixtures.js';

/**
 * Ledger.dumpBatch and Ledger.loadBatch, both implementations: a batch goes SQLite -> PostgreSQL
 * -> SQLite whole, ids renumbered and followed, and a target that already records the batch is
 * refused with nothing written.
 */

const sqlite = (path: string): LedgerLocation => ({ kind: 'sqlite', path, shown: path });

async function withLedger<T>(
  location: LedgerLocation,
  manifest: string,
  use: (ledger: Ledger) => Promise<T>,
): Promise<T> {
  const ledger = await openLedger(location, 'moving', manifest, { reconnectWithinMs: 5_000 });
  try {
    return await use(ledger);
  } finally {
    await ledger.close();
  }
}

describe('a batch dumped from SQLite and loaded back', () => {
  it('into a new SQLite file is the same batch, with its own attempt ids', async () => {
    const { dir, ledger } = richBatch();
    const manifest = join(dir, 'batch.yaml');
    const dump = await withLedger(sqlite(ledger), manifest, (l) => l.dumpBatch());
    expect(dump.attempts).toHaveLength(6);
    expect(dump.files.map((file) => file.path)).toEqual([
      'out/moving/beach-sunrise.mp4',
      'out/moving/two-takes.take1.mp4',
      'out/moving/two-takes.mp4',
    ]);
    expect(dump.runs.map((run) => [run.pid, run.exitCode])).toEqual([
      [4242, 1],
      [4343, null],
    ]);
    expect(dump.service?.identity).toBe('https://api.example.test/v1');
    expect(dump.keepers.map((keeper) => [keeper.itemId, keeper.keptItemId, keeper.take])).toEqual([
      ['beach-sunrise', 'beach-sunrise', 1],
      ['two-takes', 'two-takes', 1],
    ]);
    const copy = join(dir, 'copy.sqlite');
    // Another batch's attempt first, so that the copied ids cannot happen to be the same.
    const other = await openLedger(sqlite(copy), 'other', manifest);
    await other.prepareAttempt({
      itemId: 'x',
      seq: 1,
      idempotencyKey: 'k',
      requestBody: '{}',
      requestHash: 'h',
      reservedMicros: 0,
    });
    await other.close();
    await withLedger(sqlite(copy), manifest, (l) => l.loadBatch(dump));
    const again = await withLedger(sqlite(copy), manifest, (l) => l.dumpBatch());
    expect(normalised(again)).toEqual(normalised(dump));
    expect(again.attempts.map((attempt) => attempt.id)).not.toEqual(
      dump.attempts.map((attempt) => attempt.id),
    );
  });

  it('refuses a batch that records items, writing nothing', async () => {
    const { dir, ledger } = richBatch();
    const manifest = join(dir, 'batch.yaml');
    const dump = await withLedger(sqlite(ledger), manifest, (l) => l.dumpBatch());
    await expect(withLedger(sqlite(ledger), manifest, (l) => l.loadBatch(dump))).rejects.toThrow(
      /already records items or attempts of moving/,
    );
    const after = await withLedger(sqlite(ledger), manifest, (l) => l.dumpBatch());
    expect(normalised(after)).toEqual(normalised(dump));
  });
});

describe.skipIf(skipPostgresTests)('a batch moved SQLite -> PostgreSQL -> SQLite', () => {
  let server: PostgresTestServer;

  beforeAll(async () => {
    server = await startPostgresServer();
  }, 40_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('dumps the same batch from all three, every row, ids apart', async () => {
    const { dir, ledger } = richBatch();
    const manifest = join(dir, 'batch.yaml');
    const url = await server.createDatabase('dump');
    const pg = postgresLocation(url, {});
    const first = await withLedger(sqlite(ledger), manifest, (l) => l.dumpBatch());
    await withLedger(pg, manifest, (l) => l.loadBatch(first));
    const middle = await withLedger(pg, manifest, (l) => l.dumpBatch());
    const back = join(dir, 'back.sqlite');
    await withLedger(sqlite(back), manifest, (l) => l.loadBatch(middle));
    const last = await withLedger(sqlite(back), manifest, (l) => l.dumpBatch());
    expect(normalised(middle)).toEqual(normalised(first));
    expect(normalised(last)).toEqual(normalised(first));
    // The copied runs are history: none counts as a live runner of the shared ledger.
    expect(await psql(url, 'SELECT count(*) FROM runs WHERE heartbeat_at IS NOT NULL')).toBe('0');
    // Events name the attempts by their new ids.
    const orphans = await psql(
      url,
      'SELECT count(*) FROM events e WHERE attempt_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.id = e.attempt_id)',
    );
    expect(orphans).toBe('0');
  });

  it('refuses a PostgreSQL batch that records attempts, writing nothing', async () => {
    const { dir, ledger } = richBatch();
    const manifest = join(dir, 'batch.yaml');
    const url = await server.createDatabase('dump_full');
    const pg = postgresLocation(url, {});
    const dump = await withLedger(sqlite(ledger), manifest, (l) => l.dumpBatch());
    await withLedger(pg, manifest, (l) => l.loadBatch(dump));
    const count = () =>
      psql(url, "SELECT (SELECT count(*) FROM attempts) || ',' || (SELECT count(*) FROM events)");
    const before = await count();
    await expect(withLedger(pg, manifest, (l) => l.loadBatch(dump))).rejects.toThrow(/already records/);
    expect(await count()).toBe(before);
    expect(existsSync(ledger)).toBe(true);
  });
});
