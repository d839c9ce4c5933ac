import { closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface LedgerLock {
  release(): void;
}

/**
 * One live run per ledger. The lock is an exclusive SQLite transaction held open on a sidecar file:
 * the operating system drops it when the process dies, so a crashed run never leaves a stale lock,
 * and readers of the ledger itself (status, plan) are never blocked.
 */
export function acquireLedgerLock(ledgerPath: string): LedgerLock | null {
  const lockPath = `${ledgerPath}.lock`;
  closeSync(openSync(lockPath, 'a', 0o600));
  const db = new Database(lockPath, { timeout: 0 });
  try {
    db.pragma('journal_mode = DELETE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if (isBusy(error)) return null;
    throw error;
  }
  return {
    release() {
      if (!db.open) return;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}
