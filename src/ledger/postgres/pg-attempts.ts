import type { NewAttempt } from '../attempt-writes.js';
import {
  type AttemptRecord,
  type ImportedJob,
  importedJobValues,
  type JobSnapshot,
  jobDetail,
  jobValues,
  LOST_JOB_STATUS,
  type MoneyTotals,
} from '../records.js';
import { type ReusedTake, reusedDetail, reusedKey } from '../reused-take.js';
import { appendEvent } from './pg-items-files.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

/** Attempts in PostgreSQL: the same steps as attempt-reads.ts and attempt-writes.ts, in its SQL. */

const ATTEMPT_COLUMNS = `id, item_id AS "itemId", seq, idempotency_key AS "idempotencyKey",
  request_body AS "requestBody", request_hash AS "requestHash", reserved_micros AS "reservedMicros", state,
  http_status AS "httpStatus", http_code AS "httpCode", job_id AS "jobId", job_status AS "jobStatus",
  amount_micros AS "amountMicros", refunded_micros AS "refundedMicros", error_code AS "errorCode",
  error_message AS "errorMessage", expires_at AS "expiresAt", files_saved AS "filesSaved",
  created_at AS "createdAt", answered_at AS "answeredAt", completed_at AS "completedAt", take, vars`;

type AttemptRow = Omit<AttemptRecord, 'filesSaved'> & { filesSaved: number | boolean };

function toAttempt(row: AttemptRow): AttemptRecord {
  return { ...row, filesSaved: row.filesSaved === 1 || row.filesSaved === true };
}

export function listAttempts(c: PgLedgerConnection): AttemptRecord[] {
  return c.db
    .query<AttemptRow>(`SELECT ${ATTEMPT_COLUMNS} FROM attempts WHERE batch_id = $1 ORDER BY id`, [c.batchId])
    .map(toAttempt);
}

export function getAttempt(c: PgLedgerConnection, id: number): AttemptRecord {
  const [row] = c.db.query<AttemptRow>(`SELECT ${ATTEMPT_COLUMNS} FROM attempts WHERE id = $1`, [id]);
  if (!row) throw new Error(`the ledger has no attempt ${id}`);
  return toAttempt(row);
}

export function attemptRequest(
  c: PgLedgerConnection,
  id: number,
): Pick<AttemptRecord, 'requestBody' | 'requestHash'> {
  const [row] = c.db.query<Pick<AttemptRecord, 'requestBody' | 'requestHash'>>(
    'SELECT request_body AS "requestBody", request_hash AS "requestHash" FROM attempts WHERE id = $1',
    [id],
  );
  return row!;
}

/**
 * attempt-reads.ts's summary columns: the text columns blank ('' and a null vars), as SQLite's
 * unsavedSucceeded gives them, so that both ledgers hand status the same records.
 */
const SUMMARY_COLUMNS = [
  'request_body',
  'idempotency_key',
  'request_hash',
  'error_message',
  'created_at',
  'answered_at',
  'completed_at',
]
  .reduce((columns, column) => columns.replace(`${column} AS`, "'' AS"), ATTEMPT_COLUMNS)
  .replace(', vars', ', NULL AS vars');

export function unsavedSucceeded(c: PgLedgerConnection): AttemptRecord[] {
  return c.db
    .query<AttemptRow>(
      `SELECT ${SUMMARY_COLUMNS} FROM attempts WHERE batch_id = $1 AND job_status = 'succeeded'
         AND files_saved = 0 AND expires_at IS NOT NULL ORDER BY id`,
      [c.batchId],
    )
    .map(toAttempt);
}

export function hasAttempts(c: PgLedgerConnection): boolean {
  return c.db.query('SELECT 1 FROM attempts WHERE batch_id = $1 LIMIT 1', [c.batchId]).length > 0;
}

const MONEY_TOTALS = `SELECT COALESCE(SUM(amount_micros), 0)::bigint AS "chargedMicros",
    COALESCE(SUM(refunded_micros), 0)::bigint AS "refundedMicros",
    COALESCE(SUM(CASE WHEN state = 'prepared' THEN reserved_micros ELSE 0 END), 0)::bigint AS "reservedMicros"
  FROM attempts WHERE batch_id = $1`;

export function moneyTotals(c: PgLedgerConnection): MoneyTotals {
  return c.db.query<MoneyTotals>(MONEY_TOTALS, [c.batchId])[0]!;
}

/** Write-ahead: the keys and bodies are committed together, before any of their POSTs. */
export function prepareAttempts(c: PgLedgerConnection, attempts: readonly NewAttempt[]): AttemptRecord[] {
  return c.db.transaction(() => attempts.map((attempt) => insertAttempt(c, attempt)));
}

/**
 * The advisory lock's first key (the second is the batch's id): runners admitting attempts and a
 * copy loading a batch take it.
 */
export const BATCH_LOCK = 727_002;

/**
 * One attempt, or the one already committed with its key: a step run again after a lost
 * connection (whose COMMIT may have gone through) finds its own row instead of adding another.
 */
export function insertAttempt(c: PgLedgerConnection, attempt: NewAttempt): AttemptRecord {
  const at = c.at();
  const [inserted] = c.db.query<{ id: number }>(
    `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros,
       state, created_at, take, vars)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'prepared', $8, $9, $10)
     ON CONFLICT (batch_id, idempotency_key) DO NOTHING RETURNING id`,
    [
      c.batchId,
      attempt.itemId,
      attempt.seq,
      attempt.idempotencyKey,
      attempt.requestBody,
      attempt.requestHash,
      attempt.reservedMicros,
      at,
      attempt.take ?? 1,
      attempt.vars ?? null,
    ],
  );
  if (!inserted) {
    const [row] = c.db.query<{ id: number }>(
      'SELECT id FROM attempts WHERE batch_id = $1 AND idempotency_key = $2',
      [c.batchId, attempt.idempotencyKey],
    );
    return getAttempt(c, row!.id);
  }
  c.db.query(
    `UPDATE items SET state = 'in_flight', request_hash = $1, updated_at = $2 WHERE batch_id = $3 AND item_id = $4`,
    [attempt.requestHash, at, c.batchId, attempt.itemId],
  );
  appendEvent(c, attempt.itemId, inserted.id, 'attempt_prepared', {
    seq: attempt.seq,
    reserved: attempt.reservedMicros,
    ...(attempt.take && attempt.take > 1 ? { take: attempt.take } : {}),
  });
  return getAttempt(c, inserted.id);
}

export function recordImportedJob(c: PgLedgerConnection, imported: ImportedJob): AttemptRecord {
  return c.db.transaction(() => {
    const at = c.at();
    const [row] = c.db.query<{ id: number }>(
      `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros,
         state, created_at, answered_at, take, vars)
       VALUES ($1, $2, $3, $4, $5, $6, 0, 'accepted', $7, $8, $9, $10) RETURNING id`,
      importedJobValues(c.batchId, imported, at),
    );
    updateJob(c, row!.id, imported.job);
    appendEvent(c, imported.itemId, row!.id, 'job_imported', jobDetail(imported.job));
    return getAttempt(c, row!.id);
  });
}

/** attempt-writes.ts, insertReusedAttempt, in PostgreSQL's SQL. */
export function insertReusedAttempt(c: PgLedgerConnection, reused: ReusedTake): number {
  const at = c.at();
  const [row] = c.db.query<{ id: number }>(
    `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros,
       state, job_status, expires_at, created_at, answered_at, completed_at, take, vars)
     VALUES ($1, $2, $3, $4, $5, $6, 0, 'accepted', 'succeeded', $7, $8, $8, $9, $10, $11) RETURNING id`,
    [
      c.batchId,
      reused.itemId,
      reused.seq,
      reusedKey(reused),
      reused.requestBody,
      reused.requestHash,
      reused.from.expiresAt,
      at,
      reused.from.completedAt,
      reused.take,
      reused.vars,
    ],
  );
  appendEvent(c, reused.itemId, row!.id, 'take_reused', reusedDetail(reused));
  return row!.id;
}

export function recordAccepted(
  c: PgLedgerConnection,
  attemptId: number,
  httpStatus: number | null,
  job: JobSnapshot,
): AttemptRecord {
  return c.db.transaction(() => {
    c.db.query(
      `UPDATE attempts SET state = 'accepted', reserved_micros = 0, http_status = $1,
         answered_at = COALESCE(answered_at, $2) WHERE id = $3`,
      [httpStatus, c.at(), attemptId],
    );
    updateJob(c, attemptId, job);
    const attempt = getAttempt(c, attemptId);
    appendEvent(c, attempt.itemId, attemptId, 'job_accepted', jobDetail(job));
    return attempt;
  });
}

export function recordRejected(
  c: PgLedgerConnection,
  attemptId: number,
  httpStatus: number,
  code: string | null,
  message: string,
): AttemptRecord {
  return c.db.transaction(() => {
    c.db.query(
      `UPDATE attempts SET state = 'rejected', reserved_micros = 0, http_status = $1, http_code = $2,
         error_code = $2, error_message = $3, answered_at = $4 WHERE id = $5`,
      [httpStatus, code, message, c.at(), attemptId],
    );
    const attempt = getAttempt(c, attemptId);
    appendEvent(c, attempt.itemId, attemptId, 'attempt_rejected', { status: httpStatus, code });
    return attempt;
  });
}

export function recordJob(c: PgLedgerConnection, attemptId: number, job: JobSnapshot): AttemptRecord {
  return c.db.transaction(() => {
    const before = getAttempt(c, attemptId);
    updateJob(c, attemptId, job);
    if (before.jobStatus !== job.status)
      appendEvent(c, before.itemId, attemptId, 'job_status', { status: job.status, error: job.errorCode });
    return getAttempt(c, attemptId);
  });
}

export function recordJobLost(c: PgLedgerConnection, attemptId: number, message: string): AttemptRecord {
  return c.db.transaction(() => {
    const at = c.at();
    c.db.query(
      `UPDATE attempts SET job_status = $1, error_code = 'job_not_found', error_message = $2, completed_at = $3
         WHERE id = $4`,
      [LOST_JOB_STATUS, message, at, attemptId],
    );
    const attempt = getAttempt(c, attemptId);
    c.db.query(
      `UPDATE items SET state = 'pending', error_code = NULL, error_message = NULL, updated_at = $1
         WHERE batch_id = $2 AND item_id = $3`,
      [at, c.batchId, attempt.itemId],
    );
    appendEvent(c, attempt.itemId, attemptId, 'job_lost', {
      job: attempt.jobId,
      amount: attempt.amountMicros,
      refunded: attempt.refundedMicros,
    });
    return attempt;
  });
}

function updateJob(c: PgLedgerConnection, attemptId: number, job: JobSnapshot): void {
  c.db.query(
    `UPDATE attempts SET job_id = $1, job_status = $2, amount_micros = $3, refunded_micros = $4,
       error_code = $5, error_message = $6, expires_at = $7, completed_at = $8,
       job_created_at = COALESCE($10, job_created_at) WHERE id = $9`,
    [...jobValues(job), attemptId, job.createdAt ?? null],
  );
}
