import { type ExpressionBuilder, type RawBuilder, sql } from 'kysely';
import { ATTEMPT_COLUMNS, getAttempt, toAttempt } from './attempt-reads.js';
import type { Statement } from './dialect/database.js';
import { type ItemUpdate, putItemsStatements } from './item-rows.js';
import type { LedgerContext } from './ledger-context.js';
import {
  type AttemptRecord,
  type ImportedJob,
  type JobSnapshot,
  jobDetail,
  LOST_JOB_STATUS,
} from './records.js';
import { attemptEventOf, eventOf, whereAttempt } from './runs-and-events.js';
import type { Tables } from './tables.js';

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

/**
 * What a shared ledger's admission adds to an attempt's statements (claims.ts): the attempt is
 * written only where `admitIf` holds as its statement runs, and its item takes this runner's lease.
 */
export interface Admit {
  admitIf: RawBuilder<boolean>;
  lease: { claimed_by: string; lease_until: RawBuilder<unknown> };
}

/**
 * An attempt's row, its item in flight with the request its latest attempt sends (the same hash,
 * except for an item whose max_cost_usd alone changed, which takes the new one), and its event,
 * each written only if the attempt is. A key already in a shared ledger (a step run again after
 * a lost connection whose COMMIT went through) adds nothing; SQLite refuses it (UNIQUE), as it
 * never runs a step twice.
 */
export function prepareStatements(c: LedgerContext, attempt: NewAttempt, admit?: Admit): Statement[] {
  const at = c.at();
  const values = {
    batch_id: c.batchId,
    item_id: attempt.itemId,
    seq: attempt.seq,
    idempotency_key: attempt.idempotencyKey,
    request_body: attempt.requestBody,
    request_hash: attempt.requestHash,
    reserved_micros: attempt.reservedMicros,
    state: 'prepared' as const,
    created_at: at,
    take: attempt.take ?? 1,
    vars: attempt.vars ?? null,
  };
  const columns = Object.keys(values) as Array<keyof typeof values>;
  const insert = admit
    ? c.q
        .insertInto('attempts')
        .columns(columns)
        .expression(
          c.q.selectNoFrom(columns.map((column) => sql`${values[column]}`.as(column))).where(admit.admitIf),
        )
    : c.q.insertInto('attempts').values(values);
  const guarded =
    c.kind === 'postgres'
      ? insert.onConflict((conflict) => conflict.columns([...c.db.sql.keyColumns]).doNothing())
      : insert;
  const detail = {
    seq: attempt.seq,
    reserved: attempt.reservedMicros,
    ...(attempt.take && attempt.take > 1 ? { take: attempt.take } : {}),
  };
  const written = { key: attempt.idempotencyKey };
  const item = c.q
    .updateTable('items')
    .set({ state: 'in_flight', request_hash: attempt.requestHash, updated_at: at, ...admit?.lease })
    .where('batch_id', '=', c.batchId)
    .where('item_id', '=', attempt.itemId);
  const event = attemptEventOf(c, written, 'attempt_prepared', detail, (eb) =>
    eb('attempts.created_at', '=', at),
  );
  // Admitted, the item is claimed first, under the condition the insert then meets again (a
  // claim changes nothing it reads): neither is written without the other.
  if (admit)
    return [item.where(admit.admitIf).compile(), guarded.returning(ATTEMPT_COLUMNS).compile(), event];
  const exists = (eb: ExpressionBuilder<Tables, 'items'>) =>
    eb.exists(eb.selectFrom('attempts').select('id').where(whereAttempt(c, written)));
  return [guarded.returning(ATTEMPT_COLUMNS).compile(), item.where(exists).compile(), event];
}

/** The attempts prepareStatements wrote, in the order asked (a key found already is read back). */
export async function preparedOf(
  c: LedgerContext,
  attempts: readonly NewAttempt[],
  inserted: readonly unknown[],
): Promise<AttemptRecord[]> {
  const byKey = new Map(inserted.map((row) => [(row as AttemptRecord).idempotencyKey, row]));
  const records: AttemptRecord[] = [];
  for (const attempt of attempts) {
    const row = byKey.get(attempt.idempotencyKey);
    records.push(row ? toAttempt(row) : await getAttempt(c, { key: attempt.idempotencyKey }));
  }
  return records;
}

/** Several attempts made durable together, each before its own POST (write-ahead). */
export async function prepareAttempts(
  c: LedgerContext,
  attempts: readonly NewAttempt[],
): Promise<AttemptRecord[]> {
  if (attempts.length === 0) return [];
  const results = await c.db.batch(
    attempts.flatMap((attempt) => prepareStatements(c, attempt)),
    'durable',
  );
  return preparedOf(
    c,
    attempts,
    results.filter((_, n) => n % 3 === 0).flatMap((result) => result.rows),
  );
}

/** A job's columns as the service told them (the shared ledger keeps its creation time too). */
function jobColumns(c: LedgerContext, job: JobSnapshot) {
  return {
    job_id: job.jobId,
    job_status: job.status,
    amount_micros: job.amountMicros,
    refunded_micros: job.refundedMicros,
    error_code: job.errorCode,
    error_message: job.errorMessage,
    expires_at: job.expiresAt,
    completed_at: job.completedAt,
    ...(c.kind === 'postgres'
      ? { job_created_at: sql`coalesce(${job.createdAt ?? null}, job_created_at)` }
      : {}),
  };
}

/** One UPDATE of an attempt returning it whole, after the event that tells of it. */
async function answered(
  c: LedgerContext,
  attemptId: number,
  set: Record<string, unknown>,
  event: Statement,
): Promise<AttemptRecord> {
  const [, updated] = await c.db.batch([
    event,
    c.q.updateTable('attempts').set(set).where('id', '=', attemptId).returning(ATTEMPT_COLUMNS).compile(),
  ]);
  const row = updated!.rows[0];
  if (!row) throw new Error(`the ledger has no attempt ${attemptId}`);
  return toAttempt(row);
}

/** The service answered with a job (202, a replay, or an adoption after reconciliation). */
export function recordAccepted(
  c: LedgerContext,
  attemptId: number,
  httpStatus: number | null,
  job: JobSnapshot,
): Promise<AttemptRecord> {
  const set = {
    state: 'accepted',
    reserved_micros: 0,
    http_status: httpStatus,
    answered_at: sql`coalesce(answered_at, ${c.at()})`,
    ...jobColumns(c, job),
  };
  return answered(c, attemptId, set, attemptEventOf(c, attemptId, 'job_accepted', jobDetail(job)));
}

/** The service refused the request with an HTTP error: no job, no charge, reservation released. */
export function recordRejected(
  c: LedgerContext,
  attemptId: number,
  httpStatus: number,
  code: string | null,
  message: string,
): Promise<AttemptRecord> {
  const set = {
    state: 'rejected',
    reserved_micros: 0,
    http_status: httpStatus,
    http_code: code,
    error_code: code,
    error_message: message,
    answered_at: c.at(),
  };
  const event = attemptEventOf(c, attemptId, 'attempt_rejected', { status: httpStatus, code });
  return answered(c, attemptId, set, event);
}

/** A later view of an accepted job (status, refund, expiry); an event only when its status changes. */
export function recordJob(c: LedgerContext, attemptId: number, job: JobSnapshot): Promise<AttemptRecord> {
  const detail = { status: job.status, error: job.errorCode };
  const event = attemptEventOf(c, attemptId, 'job_status', detail, (eb) =>
    eb.or([eb('attempts.job_status', 'is', null), eb('attempts.job_status', '<>', job.status)]),
  );
  return answered(c, attemptId, jobColumns(c, job), event);
}

/**
 * The service answered 404 for an accepted job: the attempt keeps what it cost (it was charged),
 * is marked lost, and its item goes back to pending, so the next run pays for it again, saying so.
 */
export function recordJobLost(c: LedgerContext, attemptId: number, message: string): Promise<AttemptRecord> {
  const at = c.at();
  return c.db.transaction(async (tx) => {
    const [updated] = await tx.run([
      c.q
        .updateTable('attempts')
        .set({
          job_status: LOST_JOB_STATUS,
          error_code: 'job_not_found',
          error_message: message,
          completed_at: at,
        })
        .where('id', '=', attemptId)
        .returning(ATTEMPT_COLUMNS)
        .compile(),
    ]);
    if (!updated!.rows[0]) throw new Error(`the ledger has no attempt ${attemptId}`);
    const attempt = toAttempt(updated!.rows[0]);
    const detail = { job: attempt.jobId, amount: attempt.amountMicros, refunded: attempt.refundedMicros };
    await tx.run(
      [
        c.q
          .updateTable('items')
          .set({ state: 'pending', error_code: null, error_message: null, updated_at: at })
          .where('batch_id', '=', c.batchId)
          .where('item_id', '=', attempt.itemId)
          .compile(),
        eventOf(c, attempt.itemId, attemptId, 'job_lost', detail),
      ],
      true,
    );
    return attempt;
  });
}

/**
 * A job found on the service by `mediabatch import` (docs/import.md), as an accepted attempt, so
 * that spend, budget and resumption see it as if this ledger had submitted it. Its real key is
 * unknown; the placeholder is never sent, since an accepted attempt is never resent.
 */
function importedStatements(c: LedgerContext, imported: ImportedJob): Statement[] {
  const at = c.at();
  const key = `imported:${imported.job.jobId}`;
  const values = {
    batch_id: c.batchId,
    item_id: imported.itemId,
    seq: imported.seq,
    idempotency_key: key,
    request_body: imported.requestBody,
    request_hash: imported.requestHash,
    reserved_micros: 0,
    state: 'accepted' as const,
    // When the lost ledger committed the request, from the sidecar found beside its output.
    created_at: imported.createdAt ?? at,
    answered_at: at,
    take: imported.take ?? 1,
    vars: imported.vars ?? null,
  };
  const { job_created_at: _unset, ...job } = jobColumns(c, imported.job);
  const created = c.kind === 'postgres' ? { job_created_at: imported.job.createdAt ?? null } : {};
  return [
    c.q
      .insertInto('attempts')
      .values({ ...values, ...job, ...created })
      .returning(ATTEMPT_COLUMNS)
      .compile(),
    attemptEventOf(c, { key }, 'job_imported', jobDetail(imported.job)),
  ];
}

/**
 * Jobs found by `import`, each as an accepted attempt, and `items` put, in one transaction
 * (docs/import.md): the attempts come back in the order of `imported`.
 */
export async function recordImportedJobs(
  c: LedgerContext,
  imported: readonly ImportedJob[],
  items: ReadonlyArray<{ itemId: string } & ItemUpdate>,
): Promise<AttemptRecord[]> {
  const results = await c.db.batch([
    ...imported.flatMap((job) => importedStatements(c, job)),
    ...putItemsStatements(c, items),
  ]);
  // Each job's attempt comes back from the first of its two statements.
  return imported.map((_, n) => toAttempt(results[n * 2]!.rows[0]));
}
