import { takeColumn } from './attempt-reads.js';
import type { LedgerConnection } from './ledger-connection.js';
import type { ItemState } from './records.js';

/**
 * One row per item, computed by SQLite from the item's row, attempts and files, so that `status`
 * over 100,000 items never holds every attempt in memory (docs/performance.md).
 */
export interface ItemSummary {
  itemId: string;
  /** Null when only attempts know the item (the status report reads it as pending). */
  state: ItemState | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: number;
  /** Charged net of refunds over every attempt. */
  netMicros: number;
  /** The job of the newest attempt that has one. */
  lastJobId: string | null;
  /** JSON array of the file paths of the newest attempt whose files were saved, or null. */
  savedPaths: string | null;
  /**
   * JSON array, newest take first, of each take's last saved attempt ({take, job_id, net, files});
   * null unless more than one take has saved files.
   */
  takes: string | null;
}

/** One attempt's files' absolute paths (batch_path, ledger-connection.ts) in file order, as a JSON array. */
const PATHS_OF = (attempt: string) =>
  `(SELECT json_group_array(batch_path(path) ORDER BY idx) FROM files WHERE attempt_id = ${attempt})`;

/**
 * Newest attempt ids stand for "the newest attempt that ...": ids grow with every attempt. Takes
 * are looked at only for an item whose saved attempts span more than one take.
 */
const summariesSql = (take: string) => `WITH per AS (
  SELECT item_id, COUNT(*) AS attempts, SUM(amount_micros - refunded_micros) AS net,
    MAX(CASE WHEN job_id IS NOT NULL THEN id END) AS job_attempt,
    MAX(CASE WHEN files_saved = 1 THEN id END) AS saved_attempt,
    MIN(CASE WHEN files_saved = 1 THEN ${take} END) AS first_take,
    MAX(CASE WHEN files_saved = 1 THEN ${take} END) AS last_take
  FROM attempts WHERE batch_id = @batchId GROUP BY item_id)
SELECT per.item_id, i.state, i.error_code, i.error_message, per.attempts, per.net,
  (SELECT job_id FROM attempts WHERE id = per.job_attempt),
  CASE WHEN per.saved_attempt IS NOT NULL THEN ${PATHS_OF('per.saved_attempt')} END,
  CASE WHEN per.first_take < per.last_take THEN (
    SELECT json_group_array(json_object('take', t.take, 'job_id', a.job_id,
      'net', a.amount_micros - a.refunded_micros, 'files', json(${PATHS_OF('a.id')})) ORDER BY t.take DESC)
    FROM (SELECT ${take} AS take, MAX(id) AS id FROM attempts
          WHERE batch_id = @batchId AND item_id = per.item_id AND files_saved = 1 GROUP BY ${take}) t
    JOIN attempts a ON a.id = t.id) END
FROM per LEFT JOIN items i ON i.batch_id = @batchId AND i.item_id = per.item_id
UNION ALL
SELECT item_id, state, error_code, error_message, 0, 0, NULL, NULL, NULL FROM items i
WHERE batch_id = @batchId
  AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.batch_id = @batchId AND a.item_id = i.item_id)`;

/** One row as an array, in ItemSummary's order: better-sqlite3 builds arrays in half the time. */
type SummaryRow = [
  itemId: string,
  state: ItemState | null,
  errorCode: string | null,
  errorMessage: string | null,
  attempts: number,
  netMicros: number,
  lastJobId: string | null,
  savedPaths: string | null,
  takes: string | null,
];

/** Streamed: the caller keeps only what it shows, and must finish before the ledger closes. */
export function* itemSummaries(c: LedgerConnection): Generator<ItemSummary> {
  const statement = c.prepare(summariesSql(takeColumn(c))).raw();
  for (const row of statement.iterate({ batchId: c.batchId }) as IterableIterator<SummaryRow>) {
    const [itemId, state, errorCode, errorMessage, attempts, netMicros, lastJobId, savedPaths, takes] = row;
    yield { itemId, state, errorCode, errorMessage, attempts, netMicros, lastJobId, savedPaths, takes };
  }
}
