import type { LedgerConnection } from './ledger-connection.js';
import type { AttemptRecord, MoneyTotals } from './records.js';

/** Reading attempts back: whole records, the lighter views the reports need, and their sums. */

interface AttemptRow extends Omit<AttemptRecord, 'filesSaved'> {
  filesSaved: number;
}

const ATTEMPT_SELECT = `SELECT id, item_id AS itemId, seq, idempotency_key AS idempotencyKey, request_body AS requestBody,
  request_hash AS requestHash, reserved_micros AS reservedMicros, state, http_status AS httpStatus, http_code AS httpCode,
  job_id AS jobId, job_status AS jobStatus, amount_micros AS amountMicros, refunded_micros AS refundedMicros,
  error_code AS errorCode, error_message AS errorMessage, expires_at AS expiresAt, files_saved AS filesSaved,
  created_at AS createdAt, answered_at AS answeredAt, completed_at AS completedAt, take, vars FROM attempts`;

/**
 * An attempt without its text columns: at 100,000 attempts they are most of the memory, and the
 * readers of the summary (status's warnings) look at state, job and expiry only.
 */
const BLANKED_IN_SUMMARY = [
  'request_body AS',
  'idempotency_key AS',
  'request_hash AS',
  'error_message AS',
  'created_at AS',
  'answered_at AS',
  'completed_at AS',
  ', vars FROM',
];

const SUMMARY_SELECT = BLANKED_IN_SUMMARY.reduce(
  (select, column) => select.replace(column, column.startsWith(',') ? ', NULL AS vars FROM' : "'' AS"),
  ATTEMPT_SELECT,
);

/** A ledger opened read-only is never migrated: one written before takes reads as take 1. */
export function takeColumn(c: LedgerConnection): string {
  return c.hasColumn('attempts', 'take') ? 'take' : '1';
}

/** Columns later migrations added, read as their defaults from a ledger written before them. */
function withTakes(c: LedgerConnection, select: string): string {
  const withVars = c.hasColumn('attempts', 'vars')
    ? select
    : select.replace(', vars FROM', ', NULL AS vars FROM');
  return takeColumn(c) === 'take' ? withVars : withVars.replace(' take,', ' 1 AS take,');
}

/** Every attempt of the batch, whole, in id order. */
export function listAttempts(c: LedgerConnection): AttemptRecord[] {
  const select = withTakes(c, ATTEMPT_SELECT);
  const rows = c.prepare(`${select} WHERE batch_id = ? ORDER BY id`).all(c.batchId) as AttemptRow[];
  return rows.map(toAttempt);
}

export function getAttempt(c: LedgerConnection, id: number): AttemptRecord {
  return toAttempt(c.prepare(`${withTakes(c, ATTEMPT_SELECT)} WHERE id = ?`).get(id) as AttemptRow);
}

/**
 * An attempt's exact request and its hash, nothing else: what `plan` reads of an item whose hash
 * differs (runner/item-plan.ts, currentRequest), possibly once per item of a large batch.
 */
export function attemptRequest(
  c: LedgerConnection,
  id: number,
): Pick<AttemptRecord, 'requestBody' | 'requestHash'> {
  return c
    .prepare('SELECT request_body AS requestBody, request_hash AS requestHash FROM attempts WHERE id = ?')
    .get(id) as Pick<AttemptRecord, 'requestBody' | 'requestHash'>;
}

/**
 * Succeeded jobs whose files are not saved yet, in id order, without their text columns: what
 * status-report.ts's unsavedOf picks from a whole ledger, for its expiry warnings.
 */
export function unsavedSucceeded(c: LedgerConnection): AttemptRecord[] {
  const select = withTakes(c, SUMMARY_SELECT);
  const rows = c
    .prepare(
      `${select} WHERE batch_id = ? AND job_status = 'succeeded' AND files_saved = 0 AND expires_at IS NOT NULL
         ORDER BY id`,
    )
    .all(c.batchId) as AttemptRow[];
  return rows.map(toAttempt);
}

/** False for a new ledger (or one whose runs never got as far as preparing a request). */
export function hasAttempts(c: LedgerConnection): boolean {
  return c.prepare('SELECT 1 FROM attempts WHERE batch_id = ? LIMIT 1').get(c.batchId) !== undefined;
}

/** The sums of moneyTotalsOf (money-totals.ts), in SQL: the runner asks before every submission. */
export function moneyTotals(c: LedgerConnection): MoneyTotals {
  return c
    .prepare(
      `SELECT COALESCE(SUM(amount_micros), 0) AS chargedMicros, COALESCE(SUM(refunded_micros), 0) AS refundedMicros,
                COALESCE(SUM(CASE WHEN state = 'prepared' THEN reserved_micros ELSE 0 END), 0) AS reservedMicros
         FROM attempts WHERE batch_id = ?`,
    )
    .get(c.batchId) as MoneyTotals;
}

/** Converts in place: copying 100,000 rows costs more than reading them. */
function toAttempt(row: AttemptRow): AttemptRecord {
  const record = row as unknown as AttemptRecord;
  record.filesSaved = row.filesSaved === 1;
  return record;
}
