import { withoutPassword } from '../../without-password.js';
import type { LedgerDatabase } from './database.js';
import { openPostgres, type PgConfig } from './postgres.js';
import { migratePostgres, postgresColumns } from './postgres-schema.js';
import { openSqlite, sqliteColumns } from './sqlite.js';

/**
 * Where a batch's ledger is: a SQLite file, or a PostgreSQL database that several runners share.
 * `shown` is how people see it: the file's path, or the database's URL without its password,
 * which never leaves `config`. What differs between the two is said here, once, as what a
 * location has (a file of ours, runners that share it), so that no caller asks which it is.
 */
export type LedgerLocation =
  | { kind: 'sqlite'; path: string; shown: string }
  | { kind: 'postgres'; config: PgConfig; shown: string };

/** A ledger of one's own, in a SQLite file. */
export const fileLocation = (path: string): LedgerLocation => ({ kind: 'sqlite', path, shown: path });

/**
 * A database several runners share, shown by its address without the password: whatever builds
 * the address, it passes the one rule that hides a password before anything shows it.
 */
export const databaseLocation = (config: PgConfig, shown: string): LedgerLocation => ({
  kind: 'postgres',
  config,
  shown: withoutPassword(shown),
});

/** The file a ledger of one's own lives in; null for a database server, which is no file of ours. */
export function ledgerFileOf(location: LedgerLocation): string | null {
  return location.kind === 'sqlite' ? location.path : null;
}

/** Runners on many machines share it (a database server): leases, no lock file, no sandbox. */
export function isSharedLocation(location: LedgerLocation): boolean {
  return location.kind === 'postgres';
}

/** Whether two locations are one ledger: the same file, or the same database address. */
export function sameLedger(a: LedgerLocation, b: LedgerLocation): boolean {
  const file = ledgerFileOf(a);
  return file !== null ? file === ledgerFileOf(b) : ledgerFileOf(b) === null && a.shown === b.shown;
}

export interface OpenDatabase {
  readonly: boolean;
  batchName: string;
  manifestPath: string;
  reconnectWithinMs: number;
  onWaiting?: ((waitMs: number) => void) | undefined;
}

/**
 * The location's database, brought to this version's schema unless read only (a SQLite file
 * migrates as it opens; a shared database under its migration lock), and, read only, the tables
 * and columns it has (a read-only look never migrates it).
 */
export async function openDatabase(
  location: LedgerLocation,
  options: OpenDatabase,
): Promise<{ db: LedgerDatabase; columns: Set<string> | null }> {
  const db: LedgerDatabase =
    location.kind === 'sqlite'
      ? openSqlite(location.path, options.readonly, options)
      : await openPostgres(location.config, options);
  try {
    if (location.kind === 'postgres' && !options.readonly) await migratePostgres(db);
    if (!options.readonly) return { db, columns: null };
    return { db, columns: await (location.kind === 'sqlite' ? sqliteColumns(db) : postgresColumns(db)) };
  } catch (error) {
    await db.close();
    throw error;
  }
}
