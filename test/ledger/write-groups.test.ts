import { CompiledQuery } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/ledger/dialect/postgres.js';
import { WriteGroups } from '../../src/ledger/dialect/write-groups.js';
import { skipPostgresTests, usePostgresServer } from '../support/postgres-server.js';

/**
 * Write steps queued one after another on a shared ledger's connection go in one transaction and
 * one round trip (write-groups.ts), on a real PostgreSQL server: in the order they were called,
 * never past a step queued between them, and a write that fails fails alone.
 */

const insert = (n: number) => CompiledQuery.raw(`INSERT INTO t (n) VALUES (${n}) RETURNING n`);
const count = CompiledQuery.raw('SELECT count(*)::int AS c FROM t');

describe.skipIf(skipPostgresTests)('write groups on PostgreSQL', () => {
  const postgres = usePostgresServer();
  let db: PostgresDatabase | null = null;

  async function open(name: string): Promise<PostgresDatabase> {
    const url = await postgres.server.createDatabase(name);
    db = await openPostgres({ connectionString: url }, { reconnectWithinMs: 1_000 });
    await db.batch([CompiledQuery.raw('CREATE TABLE t (n integer PRIMARY KEY)')]);
    return db;
  }

  afterEach(async () => {
    await db?.close();
    db = null;
  });

  it('sends writes queued one after another in one round trip, each with its own answer', async () => {
    const database = await open('groups_merge');
    const before = database.roundTrips;
    const answers = await Promise.all(
      [1, 2, 3, 4].map((n) => database.write([insert(n)], ([result]) => result!.rows[0])),
    );
    expect(answers).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    expect(database.roundTrips - before).toBe(1);
    expect(await database.read(count)).toEqual([{ c: 4 }]);
  });

  it('never moves a write past a step queued before it', async () => {
    const database = await open('groups_order');
    const first = database.write([insert(1)], () => 'first');
    const seen = database.step(() => database.read(count));
    const second = database.write([insert(2)], () => 'second');
    expect(await Promise.all([first, seen, second])).toEqual(['first', [{ c: 1 }], 'second']);
    expect(await database.read(count)).toEqual([{ c: 2 }]);
  });

  it('fails a write alone: the others of its group are written', async () => {
    const database = await open('groups_alone');
    await database.write([insert(7)], () => undefined);
    const outcomes = await Promise.allSettled([
      database.write([insert(1)], () => 'one'),
      database.write([insert(7)], () => 'again'),
      database.write([insert(2)], () => 'two'),
    ]);
    expect(outcomes.map((each) => each.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await database.read(CompiledQuery.raw('SELECT n FROM t ORDER BY n'))).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 7 },
    ]);
  });

  it(`keeps a group to ${WriteGroups.MOST_STATEMENTS} statements`, async () => {
    const database = await open('groups_size');
    const before = database.roundTrips;
    const total = WriteGroups.MOST_STATEMENTS + 1;
    await Promise.all(Array.from({ length: total }, (_, n) => database.write([insert(n)], () => undefined)));
    expect(database.roundTrips - before).toBe(2);
    expect(await database.read(count)).toEqual([{ c: total }]);
  });
});
