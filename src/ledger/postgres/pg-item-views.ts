import { attemptOf, type EntryRow, type ItemEntry, recordOf } from '../item-entries.js';
import type { ItemSummary } from '../item-summaries.js';
import type { ItemState } from '../records.js';
import type { SavedFileFacts } from '../saved-files.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

/**
 * What `status` and `plan` read, one row per item, in PostgreSQL: the views of item-summaries.ts,
 * item-entries.ts and saved-files.ts with the same rows in the same order. Each is one query; the
 * rows are held (a 100,000-item batch is a few tens of MB) rather than streamed. Stored paths
 * become absolute here in JS (c.paths), where SQLite calls batch_path() from its SQL; the JSON
 * texts are built here too, so that they read exactly as SQLite's json_group_array writes them.
 * Items come in item_id's byte order (COLLATE "C"), which is SQLite's BINARY order of its keys.
 */

/** One attempt's stored file paths in file order, as a text[] (null, not '{}', when it has none). */
const PATHS_OF = (attempt: string) =>
  `(SELECT array_agg(path ORDER BY idx) FROM files WHERE attempt_id = ${attempt})`;

/**
 * Newest attempt ids stand for "the newest attempt that ...", as in item-summaries.ts. The job and
 * the saved paths are joined, not looked up per item: PostgreSQL's per-row subqueries were 2.7
 * times SQLite's time at 100,000 items.
 */
const SUMMARIES = `WITH per AS (
  SELECT item_id, COUNT(*) AS attempts, SUM(amount_micros - refunded_micros)::bigint AS net,
    MAX(CASE WHEN job_id IS NOT NULL THEN id END) AS job_attempt,
    MAX(CASE WHEN files_saved = 1 THEN id END) AS saved_attempt,
    MIN(CASE WHEN files_saved = 1 THEN take END) AS first_take,
    MAX(CASE WHEN files_saved = 1 THEN take END) AS last_take
  FROM attempts WHERE batch_id = $1 GROUP BY item_id)
SELECT * FROM (
SELECT per.item_id, i.state, i.error_code, i.error_message, per.attempts, per.net, j.job_id,
  CASE WHEN per.saved_attempt IS NOT NULL THEN COALESCE(saved.paths, '{}') END,
  CASE WHEN per.first_take < per.last_take THEN (
    SELECT json_agg(json_build_array(t.take, a.job_id, a.amount_micros - a.refunded_micros, ${PATHS_OF('a.id')})
      ORDER BY t.take DESC)
    FROM (SELECT take, MAX(id) AS id FROM attempts
          WHERE batch_id = $1 AND item_id = per.item_id AND files_saved = 1 GROUP BY take) t
    JOIN attempts a ON a.id = t.id) END,
  0 AS known_only
FROM per LEFT JOIN items i ON i.batch_id = $1 AND i.item_id = per.item_id
LEFT JOIN attempts j ON j.id = per.job_attempt
LEFT JOIN (SELECT f.attempt_id, array_agg(f.path ORDER BY f.idx) AS paths FROM files f
           JOIN attempts s ON s.id = f.attempt_id WHERE s.batch_id = $1 AND s.files_saved = 1
           GROUP BY f.attempt_id) saved ON saved.attempt_id = per.saved_attempt
UNION ALL
SELECT item_id, state, error_code, error_message, 0, 0, NULL, NULL, NULL, 1 FROM items i
WHERE batch_id = $1 AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.batch_id = $1 AND a.item_id = i.item_id)
) s ORDER BY known_only, item_id COLLATE "C"`;

/** One take as the query gives it: take, job, net, stored paths. */
type TakeRow = [take: number, jobId: string | null, net: number, paths: string[] | null];

type SummaryRow = [
  itemId: string,
  state: ItemState | null,
  errorCode: string | null,
  errorMessage: string | null,
  attempts: number,
  netMicros: number,
  lastJobId: string | null,
  savedPaths: string[] | null,
  takes: TakeRow[] | null,
];

export function itemSummaries(c: PgLedgerConnection): IterableIterator<ItemSummary> {
  const absolute = (paths: string[] | null) =>
    JSON.stringify((paths ?? []).map((path) => c.paths.absolute(path)));
  return c.db
    .queryArrays<SummaryRow>(SUMMARIES, [c.batchId])
    .map(([itemId, state, errorCode, errorMessage, attempts, netMicros, lastJobId, saved, takes]) => ({
      itemId,
      state,
      errorCode,
      errorMessage,
      attempts,
      netMicros,
      lastJobId,
      savedPaths: saved === null ? null : absolute(saved),
      takes:
        takes === null
          ? null
          : `[${takes.map(([take, jobId, net, paths]) => `{"take":${take},"job_id":${JSON.stringify(jobId)},"net":${net},"files":${absolute(paths)}}`).join(',')}]`,
    }))
    .values();
}

/** The latest attempt (highest seq) of each item, as item-entries.ts's LATEST_OF finds it. */
const ATTEMPT_COLUMNS =
  'l.id, l.seq, l.state, l.http_status, l.http_code, l.job_id, l.job_status, l.files_saved, l.request_hash';

/** Item rows first, then items only attempts know (item-entries.ts); a last column orders them. */
const ENTRIES = `WITH latest AS (
  SELECT DISTINCT ON (item_id) item_id, ${ATTEMPT_COLUMNS.replaceAll('l.', '')}
  FROM attempts WHERE batch_id = $1 ORDER BY item_id, seq DESC)
SELECT * FROM (
SELECT i.item_id, i.request_hash, i.state, i.retries_used, i.error_code, i.error_message, ${ATTEMPT_COLUMNS}, 0 AS orphan
FROM items i LEFT JOIN latest l ON l.item_id = i.item_id WHERE i.batch_id = $1
UNION ALL
SELECT l.item_id, NULL, NULL, NULL, NULL, NULL, ${ATTEMPT_COLUMNS}, 1
FROM latest l WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.batch_id = $1 AND i.item_id = l.item_id)
) e ORDER BY orphan, item_id COLLATE "C"`;

export function itemEntries(c: PgLedgerConnection): IterableIterator<ItemEntry> {
  // Each row carries the ordering column last, past the end of an EntryRow: recordOf and attemptOf never read it.
  return c.db
    .queryArrays<EntryRow>(ENTRIES, [c.batchId])
    .map((row) => ({ itemId: row[0], record: recordOf(row), attempt: attemptOf(row) }))
    .values();
}

type FactsRow = [string, string, number, string, number | null, string, string | null, string | null];

/** The files of each item's newest saved attempt, as saved-files.ts reads them. */
const FACTS = `SELECT a.item_id, f.path, f.bytes, f.sha256, f.mtime_ms, f.saved_at, a.job_id, a.expires_at
FROM (SELECT item_id, MAX(id) AS id FROM attempts WHERE batch_id = $1 AND files_saved = 1 GROUP BY item_id) s
JOIN attempts a ON a.id = s.id JOIN files f ON f.attempt_id = s.id
ORDER BY s.id, f.idx`;

export function savedFileFacts(c: PgLedgerConnection): IterableIterator<SavedFileFacts> {
  return c.db
    .queryArrays<FactsRow>(FACTS, [c.batchId])
    .map(([itemId, path, bytes, sha256, mtimeMs, savedAt, jobId, expiresAt]) => ({
      itemId,
      path: c.paths.absolute(path),
      bytes,
      sha256,
      mtimeMs,
      savedAt,
      jobId,
      expiresAt,
    }))
    .values();
}
