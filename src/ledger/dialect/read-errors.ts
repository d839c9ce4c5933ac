import { DatabaseError, DatabaseLostError } from '../../errors.js';

/**
 * Which errors are a ledger's database failing, on either database: what SQLite throws (better-
 * sqlite3 names its errors so) and what a PostgreSQL ledger throws (errors.ts's DatabaseError and
 * DatabaseLostError). Nothing here loads a database driver.
 */
export function isLedgerReadError(error: unknown): boolean {
  return (
    (error instanceof Error && error.name === 'SqliteError') ||
    error instanceof DatabaseError ||
    error instanceof DatabaseLostError
  );
}
