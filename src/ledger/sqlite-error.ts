/**
 * Which errors are a ledger's database failing (the classes are errors.ts's DatabaseError and
 * DatabaseLostError). Nothing here loads a database driver.
 */

/** Whether `error` came from SQLite (better-sqlite3 names its errors so): a ledger it cannot read. */
export function isLedgerReadError(error: unknown): boolean {
  return error instanceof Error && error.name === 'SqliteError';
}
