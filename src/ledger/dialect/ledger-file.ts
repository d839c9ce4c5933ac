import { existsSync } from 'node:fs';

/**
 * What differs between the databases on disk, said once: a SQLite ledger is a file, which may not
 * be there yet (nothing has run); a PostgreSQL ledger lives in a server and is made on first use.
 */
type Located = { kind: 'sqlite'; path: string } | { kind: 'postgres' };

/** The ledger's file, or null for a ledger kept by a database server. */
export function ledgerFileOf(location: Located): string | null {
  return location.kind === 'sqlite' ? location.path : null;
}

/** Whether the ledger is a file that is not there: nothing has run with it. */
export function ledgerFileMissing(location: Located): boolean {
  const file = ledgerFileOf(location);
  return file !== null && !existsSync(file);
}
