import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openPostgres, type PgConfig } from '../../src/ledger/dialect/postgres.js';
import { migratePostgres, POSTGRES_SCHEMA_VERSION } from '../../src/ledger/dialect/postgres-schema.js';
import { migrate, SCHEMA_VERSION } from '../../src/ledger/migrations.js';
import { fileLocation, openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { psql, skipPostgresTests, usePostgresServer } from '../support/postgres-server.js';
import { tempDir } from '../support/temp.js';

/**
 * A ledger left at any earlier schema version, by either database, migrates to the schema a new
 * ledger gets, object for object: the numbered migration files (src/ledger/migrations/) are read
 * in order from wherever the ledger stopped. The ledgers earlier code really wrote, with their
 * rows, are migrations.test.ts's.
 */

const MANIFEST = '/FIXTURE/project/batch.yaml';
const fixtures = join(import.meta.dirname, 'fixtures');
const versions = (latest: number): number[] => Array.from({ length: latest }, (_, version) => version);

describe('a SQLite ledger of every earlier schema version', () => {
  const dir = tempDir('mediabatch-versions-');

  /** Every table, index and trigger as SQLite keeps it, with the file's version. */
  function schemaOf(path: string): { version: unknown; objects: unknown[] } {
    const db = new Database(path, { readonly: true });
    try {
      return {
        version: db.pragma('user_version', { simple: true }),
        objects: db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all(),
      };
    } finally {
      db.close();
    }
  }

  async function opened(path: string): Promise<void> {
    await (await openLedger(fileLocation(path), 'b', MANIFEST)).close();
  }

  it.each(versions(SCHEMA_VERSION))(
    'migrates from version %i to the schema of a new ledger',
    async (from) => {
      const fresh = join(dir, `fresh-${from}.sqlite`);
      await opened(fresh);
      const old = join(dir, `v${from}.sqlite`);
      const db = new Database(old);
      try {
        migrate(db, null, from);
        expect(db.pragma('user_version', { simple: true })).toBe(from);
      } finally {
        db.close();
      }
      await opened(old);
      expect(schemaOf(old)).toEqual(schemaOf(fresh));
      expect(schemaOf(old).version).toBe(SCHEMA_VERSION);
    },
  );

  // Written by earlier code (fixtures/README-v7-and-postgres.md, v4-project/README.md): the files
  // hold that code's SQL to the letter, which SQLite keeps as each table's text.
  it.each(['v4', 'v7'])(
    "migrates the %s ledger earlier code wrote to a new ledger's schema, text for text",
    async (name) => {
      const fresh = join(dir, `fresh-${name}.sqlite`);
      await opened(fresh);
      const old = join(dir, `${name}.sqlite`);
      copyFileSync(join(fixtures, `${name}-project`, 'ledger.sqlite'), old);
      await opened(old);
      expect(schemaOf(old)).toEqual(schemaOf(fresh));
    },
  );
});

describe.skipIf(skipPostgresTests)('a PostgreSQL ledger of every earlier schema version', () => {
  const postgres = usePostgresServer();

  /** Every column, constraint, index, trigger and function of the ledger's schema, and its versions. */
  async function schemaOf(url: string): Promise<Record<string, string>> {
    const queries = {
      versions: "SELECT string_agg(version::text, ',' ORDER BY version) FROM mediabatch_schema",
      columns: `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = current_schema() ORDER BY table_name, column_name`,
      constraints: `SELECT conrelid::regclass::text AS t, conname, pg_get_constraintdef(oid) FROM pg_constraint
        WHERE connamespace = current_schema()::regnamespace ORDER BY 1, 2`,
      indexes:
        'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1, 2',
      triggers: `SELECT tgrelid::regclass::text AS t, tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
        ORDER BY 1, 2`,
      functions: `SELECT proname, pg_get_functiondef(oid) FROM pg_proc WHERE pronamespace = current_schema()::regnamespace
        ORDER BY 1`,
    };
    const schema: Record<string, string> = {};
    for (const [name, query] of Object.entries(queries)) schema[name] = await psql(url, query);
    return schema;
  }

  async function opened(url: string): Promise<void> {
    await (await openLedger(postgresLocation(url, {}), 'b', MANIFEST)).close();
  }

  it('migrates the version 4 database earlier code wrote to the schema of a new ledger', async () => {
    const fresh = await postgres.server.createDatabase('versions');
    await opened(fresh);
    const url = await postgres.server.createDatabase('versions');
    await psql(url, readFileSync(join(fixtures, 'postgres-v4.sql'), 'utf8'));
    await opened(url);
    expect(await schemaOf(url)).toEqual(await schemaOf(fresh));
  });

  it('migrates from every version to the schema of a new ledger', async () => {
    const fresh = await postgres.server.createDatabase('versions');
    await opened(fresh);
    const expected = await schemaOf(fresh);
    expect(expected.versions).toBe(
      versions(POSTGRES_SCHEMA_VERSION + 1)
        .slice(1)
        .join(','),
    );
    for (const from of versions(POSTGRES_SCHEMA_VERSION)) {
      const url = await postgres.server.createDatabase('versions');
      const { config } = postgresLocation(url, {}) as { config: PgConfig };
      const db = await openPostgres(config, { reconnectWithinMs: 1_000 });
      try {
        await migratePostgres(db, from);
      } finally {
        await db.close();
      }
      if (from > 0) expect(await psql(url, 'SELECT max(version) FROM mediabatch_schema')).toBe(String(from));
      await opened(url);
      expect({ from, ...(await schemaOf(url)) }).toEqual({ from, ...expected });
    }
  }, 120_000);
});
