import type { LedgerConnection } from './ledger-connection.js';
import type { AttemptRecord, ItemRecord } from './records.js';

/**
 * Each item's row and its latest attempt (highest seq), computed by SQLite one row per item, so
 * that `plan` over 100,000 items never holds every attempt in memory (docs/performance.md).
 */
export interface ItemEntry {
  itemId: string;
  /** The item's row; its updatedAt is blank. */
  record: ItemRecord | undefined;
  /**
   * What deciding an item reads of its latest attempt: id, seq, state, request hash (whether a
   * removed item's result answers its request, runner/renames.ts), HTTP answer and job. The other
   * columns are blank (texts '', money 0, dates null), as in the summary view.
   */
  attempt: AttemptRecord | undefined;
}

/** One row, as an array: better-sqlite3 builds arrays in about half the time of named rows. */
export type EntryRow = [
  itemId: string,
  requestHash: string | null,
  state: ItemRecord['state'] | null,
  retriesUsed: number | null,
  errorCode: string | null,
  errorMessage: string | null,
  attemptId: number | null,
  seq: number | null,
  attemptState: AttemptRecord['state'] | null,
  httpStatus: number | null,
  httpCode: string | null,
  jobId: string | null,
  jobStatus: string | null,
  filesSaved: number | null,
  requestHash: string | null,
];

const ATTEMPT_COLUMNS =
  'a.id, a.seq, a.state, a.http_status, a.http_code, a.job_id, a.job_status, a.files_saved, a.request_hash';

const LATEST_OF = (itemId: string) =>
  `(SELECT x.id FROM attempts x WHERE x.batch_id = @batchId AND x.item_id = ${itemId} ORDER BY x.seq DESC LIMIT 1)`;

/**
 * Item rows in their table's order (the one listItems gives, which plan's removed items keep),
 * then items only attempts know: none is expected, but a run would still decide them.
 */
const ENTRIES = `SELECT i.item_id, i.request_hash, i.state, i.retries_used, i.error_code, i.error_message,
  ${ATTEMPT_COLUMNS}
FROM items i LEFT JOIN attempts a ON a.id = ${LATEST_OF('i.item_id')}
WHERE i.batch_id = @batchId
UNION ALL
SELECT a.item_id, NULL, NULL, NULL, NULL, NULL, ${ATTEMPT_COLUMNS}
FROM (SELECT DISTINCT item_id FROM attempts WHERE batch_id = @batchId) o JOIN attempts a ON a.id = ${LATEST_OF('o.item_id')}
WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.batch_id = @batchId AND i.item_id = o.item_id)`;

/** Streamed: the caller must finish with the entries before the ledger closes. */
export function* itemEntries(c: LedgerConnection): Generator<ItemEntry> {
  const rows = c.prepare(ENTRIES).raw().iterate({ batchId: c.batchId }) as IterableIterator<EntryRow>;
  for (const row of rows) yield { itemId: row[0], record: recordOf(row), attempt: attemptOf(row) };
}

export function recordOf(row: EntryRow): ItemRecord | undefined {
  const [itemId, requestHash, state, retriesUsed, errorCode, errorMessage] = row;
  if (state === null) return undefined;
  return {
    itemId,
    requestHash: requestHash ?? '',
    state,
    retriesUsed: retriesUsed ?? 0,
    errorCode,
    errorMessage,
    updatedAt: '',
  };
}

export function attemptOf(row: EntryRow): AttemptRecord | undefined {
  const [itemId, , , , , , id, seq, state, httpStatus, httpCode, jobId, jobStatus, filesSaved, hash] = row;
  if (id === null) return undefined;
  return {
    id,
    itemId,
    seq: seq ?? 0,
    idempotencyKey: '',
    requestBody: '',
    requestHash: hash ?? '',
    reservedMicros: 0,
    state: state ?? 'prepared',
    httpStatus,
    httpCode,
    jobId,
    jobStatus,
    amountMicros: 0,
    refundedMicros: 0,
    errorCode: null,
    errorMessage: null,
    expiresAt: null,
    filesSaved: filesSaved === 1,
    createdAt: '',
    answeredAt: null,
    completedAt: null,
  };
}
