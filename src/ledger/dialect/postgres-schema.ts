import { CompiledQuery, sql } from 'kysely';
import { migrationSql, migrationSteps } from '../migration-files.js';
import type { LedgerDatabase } from './database.js';

/**
 * The PostgreSQL ledger's schema, versioned like the SQLite one (migrations.ts): the numbered files
 * of migrations/postgres/ (migration-files.ts), applied in order, each step committed with its
 * number in mediabatch_schema. One database holds many batches, each known by its manifest's name.
 */
const MIGRATIONS = migrationSteps('postgres');

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** Any fixed number: the advisory lock that lets one runner at a time migrate a shared database. */
const MIGRATION_LOCK = 727_001;

/**
 * Brings the database to POSTGRES_SCHEMA_VERSION (or `to`, an earlier one, as the tests make the
 * databases of earlier versions); runners starting together wait for each other.
 */
export async function migratePostgres(db: LedgerDatabase, to = POSTGRES_SCHEMA_VERSION): Promise<void> {
  await db.transaction(async (tx) => {
    const [, , found] = await tx.run([
      sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.compile(db.q),
      CompiledQuery.raw(
        'CREATE TABLE IF NOT EXISTS mediabatch_schema (version integer NOT NULL, applied_at text NOT NULL)',
      ),
      CompiledQuery.raw('SELECT MAX(version) AS version FROM mediabatch_schema'),
    ]);
    const current = Number(found!.rows[0]?.version ?? 0);
    if (current > POSTGRES_SCHEMA_VERSION)
      throw new Error(
        `ledger schema version ${current} is newer than this mediabatch understands (${POSTGRES_SCHEMA_VERSION})`,
      );
    const steps: CompiledQuery[] = [];
    for (let version = current; version < to; version += 1)
      steps.push(
        // Without values: sent as one text, its several statements together.
        CompiledQuery.raw(migrationSql(MIGRATIONS[version]!)),
        sql`INSERT INTO mediabatch_schema (version, applied_at) VALUES (${version + 1}, ${new Date().toISOString()})`.compile(
          db.q,
        ),
      );
    await tx.run(steps, true);
  });
}

/** The tables and columns a database has (a read-only look never migrates it), as `table` and `table.column`. */
export async function postgresColumns(db: LedgerDatabase): Promise<Set<string>> {
  const rows = await db.read(
    sql<{ t: string; c: string }>`SELECT table_name AS t, column_name AS c FROM information_schema.columns
      WHERE table_schema = current_schema()`.compile(db.q),
  );
  return new Set(rows.flatMap((row) => [row.t, `${row.t}.${row.c}`]));
}
