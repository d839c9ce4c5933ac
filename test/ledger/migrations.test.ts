import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_SCHEMA_VERSION } from '../../src/ledger/dialect/postgres-schema.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { SCHEMA_VERSION } from '../../src/ledger/migrations.js';
import { type LedgerLocation, openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { newAttempt } from '../support/ledger-fixtures.js';
import {
  type PostgresTestServer,
  psql,
  skipPostgresTests,
  startPostgresServer,
} from '../support/postgres-server.js';
import { tempDir } from '../support/temp.js';
import { everyRead } from './ledger-reads.js';

/**
 * Ledgers written by the synchronous ledgers this one replaced (fixtures/README-v7-and-postgres.md)
 * open, migrate and read as they did: every read the same as the old code's, row for row.
 */

const fixtures = join(import.meta.dirname, 'fixtures');
/** Where the fixtures' reads were made from: their saved files' paths are absolute under it. */
const MANIFEST = '/FIXTURE/project/batch.yaml';
/**
 * What the old code read, with what later schemas add to a read of the same rows: no attempt of
 * these ledgers is a copy (made_by_job and copied_from null), and a reusable take names its key.
 */
const readsOf = (name: string): unknown => {
  const reads = JSON.parse(readFileSync(join(fixtures, name), 'utf8')) as {
    attempts: Array<{ id: number; idempotencyKey: string }>;
    unsaved: object[];
    reusable: Array<{ attemptId: number }>;
  };
  const noCopy = { madeByJob: null, copiedFrom: null };
  return {
    ...reads,
    attempts: reads.attempts.map((attempt) => ({ ...attempt, ...noCopy })),
    unsaved: reads.unsaved.map((attempt) => ({ ...attempt, ...noCopy })),
    reusable: reads.reusable.map((take) => ({
      ...take,
      idempotencyKey: reads.attempts.find((attempt) => attempt.id === take.attemptId)?.idempotencyKey,
    })),
  };
};

async function opened<T>(
  location: LedgerLocation,
  options: object,
  use: (ledger: Ledger) => Promise<T>,
): Promise<T> {
  const ledger = await openLedger(location, 'moving', MANIFEST, options);
  try {
    return await use(ledger);
  } finally {
    await ledger.close();
  }
}

describe('a SQLite ledger the synchronous ledger wrote (schema 7)', () => {
  function copied(): LedgerLocation {
    const path = join(tempDir('mediabatch-migrate-'), 'ledger.sqlite');
    copyFileSync(join(fixtures, 'v7-project', 'ledger.sqlite'), path);
    return { kind: 'sqlite', path, shown: path };
  }

  it('reads as it did, read-only and opened for writing, and takes new steps', async () => {
    const expected = readsOf('v7-project/reads.json');
    const location = copied();
    expect(await opened(location, { readonly: true }, everyRead)).toEqual(expected);
    expect(await opened(location, {}, everyRead)).toEqual(expected);
    await opened(location, {}, async (ledger) => {
      await ledger.putItems([{ itemId: 'extra', requestHash: 'h', state: 'pending' }]);
      await ledger.prepareAttempt(newAttempt('extra', 1));
    });
    const db = new Database(location.kind === 'sqlite' ? location.path : '', { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.prepare('SELECT count(*) FROM attempts').pluck().get()).toBe(7);
    } finally {
      db.close();
    }
  });
});

describe.skipIf(skipPostgresTests)('a PostgreSQL ledger the synchronous ledger wrote (schema 4)', () => {
  let server: PostgresTestServer;

  beforeAll(async () => {
    server = await startPostgresServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  /** A new database holding the fixture's dump, as pg_dump wrote it. */
  async function restored(): Promise<string> {
    const url = await server.createDatabase('migrate');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(readFileSync(join(fixtures, 'postgres-v4.sql'), 'utf8'));
    } finally {
      await client.end();
    }
    return url;
  }

  it('reads as it did unmigrated, read-only', async () => {
    const url = await restored();
    const reads = await opened(postgresLocation(url, {}), { readonly: true }, everyRead);
    expect(reads).toEqual(readsOf('postgres-v4-reads.json'));
    expect(await psql(url, 'SELECT max(version) FROM mediabatch_schema')).toBe('4');
  });

  it('migrates, keeping every row: the reads, both batches, the claim, the look and the definition', async () => {
    const url = await restored();
    const location = postgresLocation(url, {});
    const runner = { runnerId: 'host-g:2', leaseMs: 30_000 };
    const reads = await opened(location, runner, async (ledger) => {
      // The fixture's runner's claim and look, long lapsed, are another runner's to take.
      expect(await psql(url, "SELECT claimed_by FROM items WHERE item_id = 'in-flight'")).toBe('host-f:1');
      expect(await ledger.claims!.heldElsewhere()).toEqual(new Set());
      expect(await ledger.claims!.takeListerLease(1_000)).toEqual([
        expect.objectContaining({ jobId: 'job_in-flight_1' }),
      ]);
      expect(await ledger.definitions!.current()).toMatchObject({
        revision: 1,
        hash: 'h1',
        budgetMicros: 5_000_000,
      });
      return everyRead(ledger);
    });
    expect(reads).toEqual(readsOf('postgres-v4-reads.json'));
    expect(await psql(url, 'SELECT max(version) FROM mediabatch_schema')).toBe(
      String(POSTGRES_SCHEMA_VERSION),
    );
    const other = await openLedger(location, 'other', MANIFEST);
    try {
      expect((await other.listAttempts()).map((attempt) => attempt.idempotencyKey)).toEqual(['kx']);
      // New attempts follow the restored sequence.
      await other.putItems([{ itemId: 'y', requestHash: 'h', state: 'pending' }]);
      expect((await other.prepareAttempt(newAttempt('y', 1))).id).toBeGreaterThan(7);
    } finally {
      await other.close();
    }
  });
});
