import type { LedgerConnection } from './ledger-connection.js';

/**
 * The files each item's output stands on (those of its newest attempt whose files were saved, the
 * ones `status` lists), with what the ledger recorded when it saved them, for `status` and `plan`
 * to compare with the disk. Streamed: 100,000 items are never held at once.
 */
export interface SavedFileFacts {
  itemId: string;
  /** Absolute (batch-paths.ts), or an object's URI. */
  path: string;
  bytes: number;
  sha256: string;
  /** Whole ms; null when the file was saved before the time was recorded (or is an object). */
  mtimeMs: number | null;
  savedAt: string;
  /** The attempt's job, and when the service deletes its outputs (null: not said). */
  jobId: string | null;
  expiresAt: string | null;
}

type FactsRow = [string, string, number, string, number | null, string, string | null, string | null];

/** The newest saved attempt of each item, found by the (batch_id, item_id, seq) index per item. */
const factsSql = (mtime: string) => `SELECT a.item_id, batch_path(f.path), f.bytes, f.sha256, ${mtime},
  f.saved_at, a.job_id, a.expires_at
FROM (SELECT item_id, MAX(id) AS id FROM attempts WHERE batch_id = @batchId AND files_saved = 1
      GROUP BY item_id) s
JOIN attempts a ON a.id = s.id JOIN files f ON f.attempt_id = s.id
ORDER BY s.id, f.idx`;

/** Streamed: the caller must finish with the rows before the ledger closes. */
export function* savedFileFacts(c: LedgerConnection): Generator<SavedFileFacts> {
  // A ledger only read (status, plan) may predate the column: then no time was recorded.
  const mtime = c.hasColumn('files', 'mtime_ms') ? 'f.mtime_ms' : 'NULL';
  const rows = c.prepare(factsSql(mtime)).raw().iterate({ batchId: c.batchId }) as IterableIterator<FactsRow>;
  for (const [itemId, path, bytes, sha256, mtimeMs, savedAt, jobId, expiresAt] of rows)
    yield { itemId, path, bytes, sha256, mtimeMs, savedAt, jobId, expiresAt };
}

/** When an attempt's files were saved (the first of them), or null when none were. */
export function savedAtOf(c: LedgerConnection, attemptId: number): string | null {
  const row = c.prepare('SELECT MIN(saved_at) AS at FROM files WHERE attempt_id = ?').get(attemptId);
  return (row as { at: string | null } | undefined)?.at ?? null;
}
