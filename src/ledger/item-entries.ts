import type { LedgerConnection } from './ledger-connection.js';
import type { AttemptRecord, ItemRecord } from './records.js';

/**
 * Each item's row and its latest attempt (highest seq), computed by SQLite one row per item, so
 * that `plan` over 100,000 items never holds every attempt in memory (docs/performance.md).
 */
export interface ItemEntry {
  itemId: string;
  record: ItemRecord | undefined;
  /**
   * What deciding an item reads of its latest attempt: id, seq, state, HTTP answer and job. The
   * other columns are blank (texts '', money 0, dates null), as in the summary view.
   */
  attempt: AttemptRecord | undefined;
}

interface EntryRow {
  itemId: string;
  requestHash: string | null;
  state: ItemRecord['state'] | null;
  retriesUsed: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  updatedAt: string | null;
  attemptId: number | null;
  seq: number | null;
  attemptState: AttemptRecord['state'] | null;
  httpStatus: number | null;
  httpCode: string | null;
  jobId: string | null;
  jobStatus: string | null;
  filesSaved: number | null;
}

const ATTEMPT_COLUMNS = `a.id AS attemptId, a.seq AS seq, a.state AS attemptState, a.http_status AS httpStatus,
  a.http_code AS httpCode, a.job_id AS jobId, a.job_status AS jobStatus, a.files_saved AS filesSaved`;

const LATEST_OF = (itemId: string) =>
  `(SELECT x.id FROM attempts x WHERE x.batch_id = @batchId AND x.item_id = ${itemId} ORDER BY x.seq DESC LIMIT 1)`;

/** Items in the order listItems gives them, then items only attempts know (safety: none expected). */
const ENTRIES = `SELECT i.item_id AS itemId, i.request_hash AS requestHash, i.state AS state,
  i.retries_used AS retriesUsed, i.error_code AS errorCode, i.error_message AS errorMessage,
  i.updated_at AS updatedAt, ${ATTEMPT_COLUMNS}
FROM items i LEFT JOIN attempts a ON a.id = ${LATEST_OF('i.item_id')}
WHERE i.batch_id = @batchId
UNION ALL
SELECT a.item_id, NULL, NULL, NULL, NULL, NULL, NULL, ${ATTEMPT_COLUMNS}
FROM (SELECT DISTINCT item_id FROM attempts WHERE batch_id = @batchId) o JOIN attempts a ON a.id = ${LATEST_OF('o.item_id')}
WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.batch_id = @batchId AND i.item_id = o.item_id)`;

/** Streamed: the caller must finish with the entries before the ledger closes. */
export function* itemEntries(c: LedgerConnection): Generator<ItemEntry> {
  const rows = c.prepare(ENTRIES).iterate({ batchId: c.batchId }) as IterableIterator<EntryRow>;
  for (const row of rows) yield { itemId: row.itemId, record: recordOf(row), attempt: attemptOf(row) };
}

function recordOf(row: EntryRow): ItemRecord | undefined {
  if (row.state === null) return undefined;
  return {
    itemId: row.itemId,
    requestHash: row.requestHash ?? '',
    state: row.state,
    retriesUsed: row.retriesUsed ?? 0,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    updatedAt: row.updatedAt ?? '',
  };
}

function attemptOf(row: EntryRow): AttemptRecord | undefined {
  if (row.attemptId === null) return undefined;
  return {
    id: row.attemptId,
    itemId: row.itemId,
    seq: row.seq ?? 0,
    idempotencyKey: '',
    requestBody: '',
    requestHash: '',
    reservedMicros: 0,
    state: row.attemptState ?? 'prepared',
    httpStatus: row.httpStatus,
    httpCode: row.httpCode,
    jobId: row.jobId,
    jobStatus: row.jobStatus,
    amountMicros: 0,
    refundedMicros: 0,
    errorCode: null,
    errorMessage: null,
    expiresAt: null,
    filesSaved: row.filesSaved === 1,
    createdAt: '',
    answeredAt: null,
    completedAt: null,
  };
}
