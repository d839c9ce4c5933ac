/**
 * What a ledger's database may answer instead of rows: the errors the layers above tell apart
 * (batch/ledger-access.ts, batch/ledger-read.ts). Nothing here loads a database driver.
 */

/** The database stopped answering for longer than the ledger waits: the run stops, no item fails. */
export class DatabaseLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseLostError';
  }
}

/** An error the database itself gave (a constraint, a bad statement, a refused login), with its SQLSTATE. */
export class DatabaseError extends Error {
  readonly code: string | null;
  readonly constraint: string | null;
  constructor(message: string, code: string | null, constraint: string | null) {
    super(message);
    this.name = 'DatabaseError';
    this.code = code;
    this.constraint = constraint;
  }
}

/** Whether `error` came from SQLite (better-sqlite3 names its errors so): a ledger it cannot read. */
export function isLedgerReadError(error: unknown): boolean {
  return error instanceof Error && error.name === 'SqliteError';
}
