import { sql } from 'kysely';
import { ATTEMPT_COLUMNS, toAttempt } from './attempt-reads.js';
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
import { attemptEventOf, eventOf } from './runs-and-events.js';
import { StatementShape } from './statement-shape.js';

/** Every change to an attempt after its POST (attempt-prepare.ts writes it before): answered, followed, lost, imported. */

/** A job's columns as the service told them; none before a job is known. */
function jobColumns(job: JobSnapshot | null) {
  return {
    job_id: job?.jobId ?? null,
    job_status: job?.status ?? null,
    amount_micros: job?.amountMicros ?? 0,
    refunded_micros: job?.refundedMicros ?? 0,
    error_code: job?.errorCode ?? null,
    error_message: job?.errorMessage ?? null,
    expires_at: job?.expiresAt ?? null,
    completed_at: job?.completedAt ?? null,
  };
}

/** What an answer or a later view writes to an attempt (each form sets only its own columns). */
type AnswerValues = ReturnType<typeof jobColumns> & {
  id: number;
  state: 'accepted' | 'rejected';
  reserved_micros: number;
  http_status: number | null;
  http_code: string | null;
  at: string;
  job_created_at: string | null;
};

/** accepted: the job, answered once; rejected: an HTTP error; job: a later view of the job. */
type AnswerForm = 'accepted' | 'rejected' | 'job';

const answerRow = new StatementShape((c, v: AnswerValues, form: AnswerForm) => {
  const job = {
    job_id: v.job_id,
    job_status: v.job_status,
    amount_micros: v.amount_micros,
    refunded_micros: v.refunded_micros,
    error_code: v.error_code,
    error_message: v.error_message,
    expires_at: v.expires_at,
    completed_at: v.completed_at,
    // The shared ledger keeps the job's creation time too.
    ...(c.can.jobCreationTimes
      ? { job_created_at: sql<string>`coalesce(${v.job_created_at}, job_created_at)` }
      : {}),
  };
  const answer = { state: v.state, reserved_micros: v.reserved_micros, http_status: v.http_status };
  const set = {
    accepted: { ...answer, answered_at: sql<string>`coalesce(answered_at, ${v.at})`, ...job },
    rejected: {
      ...answer,
      http_code: v.http_code,
      error_code: v.error_code,
      error_message: v.error_message,
      answered_at: v.at,
    },
    job,
  }[form];
  return c.q.updateTable('attempts').set(set).where('id', '=', v.id).returning(ATTEMPT_COLUMNS);
});

/** The values of an answer: a job as the service told it, or none. */
function answerValues(c: LedgerContext, attemptId: number, job: JobSnapshot | null): AnswerValues {
  return {
    id: attemptId,
    state: 'accepted',
    reserved_micros: 0,
    http_status: null,
    http_code: null,
    at: c.at(),
    ...jobColumns(job),
    job_created_at: job?.createdAt ?? null,
  };
}

/** One UPDATE of an attempt returning it whole, after the event that tells of it: a step of its own. */
function answered(
  c: LedgerContext,
  values: AnswerValues,
  form: AnswerForm,
  event: Statement,
): Promise<AttemptRecord> {
  return c.db.write([event, answerRow.bind(c, values, form)], ([, updated]) =>
    attemptOf(updated!.rows[0], values.id),
  );
}

function attemptOf(row: unknown, attemptId: number): AttemptRecord {
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
  const values = { ...answerValues(c, attemptId, job), http_status: httpStatus };
  return answered(c, values, 'accepted', attemptEventOf(c, attemptId, 'job_accepted', jobDetail(job)));
}

/** The service refused the request with an HTTP error: no job, no charge, reservation released. */
export function recordRejected(
  c: LedgerContext,
  attemptId: number,
  httpStatus: number,
  code: string | null,
  message: string,
): Promise<AttemptRecord> {
  const values: AnswerValues = {
    ...answerValues(c, attemptId, null),
    state: 'rejected',
    http_status: httpStatus,
    http_code: code,
    error_code: code,
    error_message: message,
  };
  const event = attemptEventOf(c, attemptId, 'attempt_rejected', { status: httpStatus, code });
  return answered(c, values, 'rejected', event);
}

/**
 * Later views of accepted jobs (status, refund, expiry), an event for each whose status changes,
 * in one step of its own (LedgerDatabase.write): a look's every changed job in one round trip of a shared ledger, where one
 * step each kept the run's next submissions waiting behind them (docs/performance.md). The
 * attempts come back in the order of `views`.
 */
export function recordJobs(
  c: LedgerContext,
  views: ReadonlyArray<{ attemptId: number; job: JobSnapshot }>,
): Promise<AttemptRecord[]> {
  if (views.length === 0) return Promise.resolve([]);
  const statements = views.flatMap(({ attemptId, job }) => {
    const detail = { status: job.status, error: job.errorCode };
    const event = attemptEventOf(c, attemptId, 'job_status', detail, { statusNot: job.status });
    return [event, answerRow.bind(c, answerValues(c, attemptId, job), 'job')];
  });
  return c.db.write(statements, (results) =>
    views.map(({ attemptId }, n) => attemptOf(results[n * 2 + 1]!.rows[0], attemptId)),
  );
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
  const created = c.can.jobCreationTimes ? { job_created_at: imported.job.createdAt ?? null } : {};
  return [
    c.q
      .insertInto('attempts')
      .values({ ...values, ...jobColumns(imported.job), ...created })
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
