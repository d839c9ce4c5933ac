import type { AttemptRecord, ItemRecord, ItemState } from './records.js';

/**
 * Per-item views for the read-only commands, computed by SQLite so that `status` and `plan` over
 * 100,000 items never hold every attempt in memory (docs/performance.md). Each view is streamed
 * one row per item; the caller keeps only what it prints.
 */

/** Every item id the batch knows, from its item rows and (for safety) its attempts. */
const IDS = `ids AS (SELECT item_id FROM items WHERE batch_id = @batchId
  UNION SELECT item_id FROM attempts WHERE batch_id = @batchId)`;

const OF_ITEM = 'a.batch_id = @batchId AND a.item_id = ids.item_id';

/** What `status` shows for one item. */
export interface ItemSummary {
  itemId: string;
  /** Null when only attempts know the item (the status report reads it as pending). */
  state: ItemState | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: number;
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

export const ITEM_SUMMARIES = `WITH ${IDS}
SELECT ids.item_id AS itemId, i.state AS state, i.error_code AS errorCode, i.error_message AS errorMessage,
  (SELECT COUNT(*) FROM attempts a WHERE ${OF_ITEM}) AS attempts,
  (SELECT COALESCE(SUM(a.amount_micros - a.refunded_micros), 0) FROM attempts a WHERE ${OF_ITEM}) AS netMicros,
  (SELECT a.job_id FROM attempts a WHERE ${OF_ITEM} AND a.job_id IS NOT NULL ORDER BY a.id DESC LIMIT 1) AS lastJobId,
  (SELECT json_group_array(path) FROM (SELECT f.path FROM files f WHERE f.attempt_id =
     (SELECT a.id FROM attempts a WHERE ${OF_ITEM} AND a.files_saved = 1 ORDER BY a.id DESC LIMIT 1)
     ORDER BY f.idx)) AS savedPaths,
  (SELECT CASE WHEN COUNT(*) > 1 THEN json_group_array(json_object('take', t.take, 'job_id', t.job_id, 'net', t.net,
     'files', json((SELECT json_group_array(path) FROM (SELECT f.path FROM files f WHERE f.attempt_id = t.id ORDER BY f.idx)))))
     END FROM (SELECT a.take AS take, MAX(a.id) AS id, a.job_id AS job_id, a.amount_micros - a.refunded_micros AS net
       FROM attempts a WHERE ${OF_ITEM} AND a.files_saved = 1 GROUP BY a.take ORDER BY a.take DESC) t) AS takes
FROM ids LEFT JOIN items i ON i.batch_id = @batchId AND i.item_id = ids.item_id`;

/**
 * What `plan` decides one item from: its item row and its latest attempt (highest seq), with the
 * attempt's long text columns left out.
 */
export interface PlanRow {
  itemId: string;
  requestHash: string | null;
  state: ItemState | null;
  retriesUsed: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  attemptId: number | null;
  seq: number | null;
  attemptState: AttemptRecord['state'] | null;
  httpStatus: number | null;
  httpCode: string | null;
  jobId: string | null;
  jobStatus: string | null;
  filesSaved: number | null;
  attemptHash: string | null;
}

export const PLAN_ROWS = `WITH ${IDS}
SELECT ids.item_id AS itemId, i.request_hash AS requestHash, i.state AS state, i.retries_used AS retriesUsed,
  i.error_code AS errorCode, i.error_message AS errorMessage, a.id AS attemptId, a.seq AS seq,
  a.state AS attemptState, a.http_status AS httpStatus, a.http_code AS httpCode, a.job_id AS jobId,
  a.job_status AS jobStatus, a.files_saved AS filesSaved, a.request_hash AS attemptHash
FROM ids LEFT JOIN items i ON i.batch_id = @batchId AND i.item_id = ids.item_id
LEFT JOIN attempts a ON a.id = (SELECT a.id FROM attempts a WHERE ${OF_ITEM} ORDER BY a.seq DESC LIMIT 1)`;

/**
 * Prices charged, one row per kind of request (model, seconds, definition): the newest charge of
 * that kind with its priced body, and how many accepted attempts of that kind there were.
 */
export interface PriceSample {
  id: number;
  requestBody: string;
  amountMicros: number;
  samples: number;
  sumMicros: number;
}

export const PRICE_SAMPLES = `SELECT MAX(id) AS id, amount_micros AS amountMicros, COUNT(*) AS samples,
  SUM(amount_micros) AS sumMicros, json_object(
    'model', json_extract(request_body, '$.model'),
    'input', json_object('seconds', json_extract(request_body, '$.input.seconds'),
                         'definition', json_extract(request_body, '$.input.definition'))) AS requestBody
FROM attempts WHERE batch_id = @batchId AND state = 'accepted' AND job_id IS NOT NULL
  AND json_valid(request_body) AND json_type(request_body) = 'object'
GROUP BY json_extract(request_body, '$.model'), json_extract(request_body, '$.input.seconds'),
  json_extract(request_body, '$.input.definition')`;

/** Attempts whose job succeeded but whose files are not saved yet: `status` warns before they expire. */
export const UNSAVED_SUCCEEDED = `WHERE batch_id = @batchId AND job_status = 'succeeded' AND files_saved = 0
  AND expires_at IS NOT NULL ORDER BY id`;

/** A plan row as the records plan decides from; the attempt's unread text columns are blank. */
export function planEntry(row: PlanRow): PlanEntry {
  const record: ItemRecord | undefined =
    row.state === null
      ? undefined
      : {
          itemId: row.itemId,
          requestHash: row.requestHash ?? '',
          state: row.state,
          retriesUsed: row.retriesUsed ?? 0,
          errorCode: row.errorCode,
          errorMessage: row.errorMessage,
          updatedAt: '',
        };
  const attempt: AttemptRecord | undefined =
    row.attemptId === null
      ? undefined
      : {
          id: row.attemptId,
          itemId: row.itemId,
          seq: row.seq ?? 0,
          idempotencyKey: '',
          requestBody: '',
          requestHash: row.attemptHash ?? '',
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
  return { itemId: row.itemId, record, attempt };
}

/** One item's row and latest attempt, either possibly absent. */
export interface PlanEntry {
  itemId: string;
  record: ItemRecord | undefined;
  attempt: AttemptRecord | undefined;
}
