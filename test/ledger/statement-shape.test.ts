import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchPaths } from '../../src/ledger/batch-paths.js';
import { openSqlite, type SqliteDatabase } from '../../src/ledger/dialect/sqlite.js';
import { LedgerContext } from '../../src/ledger/ledger-context.js';
import { StatementShape } from '../../src/ledger/statement-shape.js';
import { tempDir } from '../support/temp.js';

/*
 * A statement shape is compiled once per database and bound to each call's values
 * (src/ledger/statement-shape.ts): run on a real SQLite ledger, what each call writes is its own.
 */

let db: SqliteDatabase;
let other: SqliteDatabase;
const contextOf = (database: SqliteDatabase, batchId: number) =>
  new LedgerContext({
    db: database,
    batchId,
    now: () => new Date('2026-11-28T12:00:00Z'),
    paths: new BatchPaths('/x', '/x'),
    runnerId: null,
    columns: null,
  });

beforeAll(() => {
  const dir = tempDir();
  const open = (name: string) =>
    openSqlite(join(dir, name), false, { batchName: 'b', manifestPath: 'b.yaml' });
  db = open('a.sqlite');
  other = open('b.sqlite');
});
afterAll(async () => {
  await db.close();
  await other.close();
});

interface Values {
  name: string;
  manifest: string;
  at: string;
}

let builds = 0;
const batchRow = new StatementShape((c, v: Values, form: 'plain' | 'upper') => {
  builds += 1;
  const name = form === 'upper' ? sql<string>`upper(${v.name})` : v.name;
  return c.q
    .insertInto('batches')
    .values({ name, manifest_path: v.manifest, created_at: v.at })
    .returning('name');
});

const names = async (database: SqliteDatabase) =>
  (
    await database.read(
      database.q.selectFrom('batches').select(['name', 'manifest_path']).orderBy('name').compile(),
    )
  ).map((row) => `${row.name}:${row.manifest_path}`);

describe('a statement shape', () => {
  it("binds each call's own values to the statement compiled once per form and database", async () => {
    const c = contextOf(db, 1);
    const before = builds;
    for (const [name, manifest] of [
      ['one', 'a.yaml'],
      ['two', 'b.yaml'],
      ['three', 'c.yaml'],
    ] as const)
      await db.batch([batchRow.bind(c, { name, manifest, at: 'now' })]);
    const [upper] = await db.batch([
      batchRow.bind(c, { name: 'four', manifest: 'd.yaml', at: 'now' }, 'upper'),
    ]);
    expect(upper!.rows).toEqual([{ name: 'FOUR' }]);
    await other.batch([batchRow.bind(contextOf(other, 1), { name: 'five', manifest: 'e.yaml', at: 'now' })]);
    // Built once for the plain form, once for the upper one, once more for the other database.
    expect(builds - before).toBe(3);
    expect(await names(db)).toEqual(['FOUR:d.yaml', 'one:a.yaml', 'three:c.yaml', 'two:b.yaml']);
    expect(await names(other)).toEqual(['five:e.yaml']);
  });

  it('refuses a shape that bakes in a value it was not given', () => {
    const baked = new StatementShape((c, v: { at: string }) =>
      c.q.insertInto('batches').values({ name: `batch ${c.batchId}`, manifest_path: 'm', created_at: v.at }),
    );
    expect(() => baked.bind(contextOf(db, 7), { at: 'now' })).toThrow(/bakes in a value not passed to it/);
  });

  it('refuses a shape that writes a value into its SQL text', () => {
    const literal = new StatementShape((c, v: { name: string }) =>
      c.q.selectFrom('batches').select(sql.lit(v.name).as('n')),
    );
    expect(() => literal.bind(contextOf(db, 1), { name: 'x' })).toThrow(/writes a value into its SQL text/);
  });

  it('refuses a call without one of the values its shape binds', () => {
    const shape = new StatementShape((c, v: { name: string; at?: string }) =>
      c.q.insertInto('batches').values({ name: v.name, manifest_path: v.name, created_at: v.at ?? '' }),
    );
    const c = contextOf(db, 1);
    expect(shape.bind(c, { name: 'x', at: 'now' }).parameters).toEqual(['x', 'x', 'now']);
    expect(() => shape.bind(c, { name: 'y' })).toThrow(/no value for "at"/);
  });
});
