import { getAttempt } from './attempt-reads.js';
import type { LedgerConnection } from './ledger-connection.js';
import {
  type AttemptRecord,
  type ImportedJob,
  importedJobValues,
  type JobSnapshot,
  jobDetail,
  jobValues,
  LOST_JOB_STATUS,
  preparedAttempt,
} from './records.js';
import { type ReusedTake, reusedDetail, reusedKey } from './reused-take.js';
import { appendEvent } from './runs-and-events.js';

/** Every change to an attempt: prepared before its POST, then answered, then followed. */

export interface NewAttempt {
  itemId: string;
  seq: number;
  idempotencyKey: string;
  requestBody: string;
  requestHash: string;
  reservedMicros: number;
  /** Default 1; a redo prepares the next take. */
  take?: number;
  /** The item's template variables as JSON text, or null. */
  vars?: string | null;
}

/** Several attempts made durable together, with one disk sync: each before its own POST. */
export function prepareAttempts(c: LedgerConnection, attempts: readonly NewAttempt[]): AttemptRecord[] {
  return c.write(() => attempts.map((attempt) => insertAttempt(c, attempt)), true);
}

function insertAttempt(c: LedgerConnection, attempt: NewAttempt): AttemptRecord {
  const at = c.at();
  const info = c
    .prepare(
      `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros, state, created_at, take, vars)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'prepared', ?, ?, ?)`,
    )
    .run(
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
    );
  const id = Number(info.lastInsertRowid);
  // The item's row records the request its latest attempt sends: the same hash, except for an
  // item whose max_cost_usd alone changed (runner/item-plan.ts, currentRequest), which takes the new one.
  c.prepare(
    `UPDATE items SET state = 'in_flight', request_hash = ?, updated_at = ? WHERE batch_id = ? AND item_id = ?`,
  ).run(attempt.requestHash, at, c.batchId, attempt.itemId);
  appendEvent(c, attempt.itemId, id, 'attempt_prepared', {
    seq: attempt.seq,
    reserved: attempt.reservedMicros,
    ...(attempt.take && attempt.take > 1 ? { take: attempt.take } : {}),
  });
  // The row as getAttempt would read it back: a query and a 22-property row object spared per attempt.
  return preparedAttempt({
    id,
    itemId: attempt.itemId,
    seq: attempt.seq,
    idempotencyKey: attempt.idempotencyKey,
    requestBody: attempt.requestBody,
    requestHash: attempt.requestHash,
    reservedMicros: attempt.reservedMicros,
    createdAt: at,
    take: attempt.take ?? 1,
    vars: attempt.vars ?? null,
  });
}

/** A job found on the service by `mediabatch import`: see Ledger.recordImportedJob. */
export function recordImportedJob(c: LedgerConnection, imported: ImportedJob): AttemptRecord {
  return c.db.transaction(() => {
    const at = c.at();
    const info = c
      .prepare(
        `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros, state, created_at, answered_at, take, vars)
           VALUES (?, ?, ?, ?, ?, ?, 0, 'accepted', ?, ?, ?, ?)`,
      )
      .run(...importedJobValues(c.batchId, imported, at));
    const id = Number(info.lastInsertRowid);
    updateJob(c, id, imported.job);
    appendEvent(c, imported.itemId, id, 'job_imported', jobDetail(imported.job));
    return getAttempt(c, id);
  })();
}

/**
 * A saved take copied to an item whose request it answers (Ledger.recordReusedTake): an accepted
 * attempt with no job of its own and no charge, so nothing is counted twice; the caller saves its
 * files and marks the item done in the same transaction. Its key names the take it copies.
 */
export function insertReusedAttempt(c: LedgerConnection, reused: ReusedTake): number {
  const at = c.at();
  const info = c
    .prepare(
      `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros,
         state, job_status, expires_at, created_at, answered_at, completed_at, take, vars)
       VALUES (?, ?, ?, ?, ?, ?, 0, 'accepted', 'succeeded', ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      c.batchId,
      reused.itemId,
      reused.seq,
      reusedKey(reused),
      reused.requestBody,
      reused.requestHash,
      reused.from.expiresAt,
      at,
      at,
      reused.from.completedAt,
      reused.take,
      reused.vars,
    );
  const id = Number(info.lastInsertRowid);
  appendEvent(c, reused.itemId, id, 'take_reused', reusedDetail(reused));
  return id;
}

/** The service answered with a job (202, a replay, or an adoption after reconciliation). */
export function recordAccepted(
  c: LedgerConnection,
  attemptId: number,
  httpStatus: number | null,
  job: JobSnapshot,
): AttemptRecord {
  return c.write(() => {
    c.prepare(
      `UPDATE attempts SET state = 'accepted', reserved_micros = 0, http_status = ?, answered_at = COALESCE(answered_at, ?)
           WHERE id = ?`,
    ).run(httpStatus, c.at(), attemptId);
    updateJob(c, attemptId, job);
    const attempt = getAttempt(c, attemptId);
    appendEvent(c, attempt.itemId, attemptId, 'job_accepted', jobDetail(job));
    return attempt;
  });
}

/** The service refused the request with an HTTP error: no job, no charge, reservation released. */
export function recordRejected(
  c: LedgerConnection,
  attemptId: number,
  httpStatus: number,
  code: string | null,
  message: string,
): AttemptRecord {
  return c.write(() => {
    c.prepare(
      `UPDATE attempts SET state = 'rejected', reserved_micros = 0, http_status = ?, http_code = ?,
             error_code = ?, error_message = ?, answered_at = ? WHERE id = ?`,
    ).run(httpStatus, code, code, message, c.at(), attemptId);
    const attempt = getAttempt(c, attemptId);
    appendEvent(c, attempt.itemId, attemptId, 'attempt_rejected', { status: httpStatus, code });
    return attempt;
  });
}

/** A later view of an accepted job (status, refund, expiry). */
export function recordJob(c: LedgerConnection, attemptId: number, job: JobSnapshot): AttemptRecord {
  return c.write(() => {
    const before = getAttempt(c, attemptId);
    updateJob(c, attemptId, job);
    if (before.jobStatus !== job.status) {
      appendEvent(c, before.itemId, attemptId, 'job_status', { status: job.status, error: job.errorCode });
    }
    return getAttempt(c, attemptId);
  });
}

function updateJob(c: LedgerConnection, attemptId: number, job: JobSnapshot): void {
  c.prepare(
    `UPDATE attempts SET job_id = ?, job_status = ?, amount_micros = ?, refunded_micros = ?,
           error_code = ?, error_message = ?, expires_at = ?, completed_at = ? WHERE id = ?`,
  ).run(...jobValues(job), attemptId);
}

/**
 * The service answered 404 for an accepted job: the attempt keeps what it cost (it was charged),
 * is marked lost, and its item goes back to pending, so the next run pays for it again, saying so.
 */
export function recordJobLost(c: LedgerConnection, attemptId: number, message: string): AttemptRecord {
  return c.write(() => {
    const at = c.at();
    c.prepare(
      `UPDATE attempts SET job_status = ?, error_code = 'job_not_found', error_message = ?, completed_at = ?
         WHERE id = ?`,
    ).run(LOST_JOB_STATUS, message, at, attemptId);
    const attempt = getAttempt(c, attemptId);
    c.prepare(
      `UPDATE items SET state = 'pending', error_code = NULL, error_message = NULL, updated_at = ?
         WHERE batch_id = ? AND item_id = ?`,
    ).run(at, c.batchId, attempt.itemId);
    appendEvent(c, attempt.itemId, attemptId, 'job_lost', {
      job: attempt.jobId,
      amount: attempt.amountMicros,
      refunded: attempt.refundedMicros,
    });
    return attempt;
  });
}
