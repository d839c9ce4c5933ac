import { sql } from 'kysely';
import type { LedgerContext } from './ledger-context.js';
import type { AttemptRecord, MoneyTotals } from './records.js';
import type { AttemptRef } from './runs-and-events.js';
import { whereAttempt } from './runs-and-events.js';

/** Reading attempts back: whole records, the lighter views the reports need, and their sums. */

/** An attempt's columns as AttemptRecord names them (RETURNING gives the same as SELECT). */
export const ATTEMPT_COLUMNS = [
  'id',
  'item_id as itemId',
  'seq',
  'idempotency_key as idempotencyKey',
  'request_body as requestBody',
  'request_hash as requestHash',
  'reserved_micros as reservedMicros',
  'state',
  'http_status as httpStatus',
  'http_code as httpCode',
  'job_id as jobId',
  'job_status as jobStatus',
  'amount_micros as amountMicros',
  'refunded_micros as refundedMicros',
  'error_code as errorCode',
  'error_message as errorMessage',
  'expires_at as expiresAt',
  'files_saved as filesSaved',
  'created_at as createdAt',
  'answered_at as answeredAt',
  'completed_at as completedAt',
  'take',
  'vars',
  'made_by_job as madeByJob',
  'copied_from as copiedFrom',
] as const;

/** Without take and vars: a ledger opened read-only may predate them (attemptsOf adds them back). */
const LATER = new Set(['take', 'vars', 'made_by_job as madeByJob', 'copied_from as copiedFrom']);
const BEFORE_TAKES = ATTEMPT_COLUMNS.filter((column) => !LATER.has(column));

/** What a copy points at (docs/results.md): read as null from a ledger opened read-only before them. */
export function resultColumns(c: LedgerContext, table = 'attempts') {
  return [
    c.column<string | null>('attempts', 'made_by_job', `${table}.made_by_job`, null).as('madeByJob'),
    c.column<string | null>('attempts', 'copied_from', `${table}.copied_from`, null).as('copiedFrom'),
  ];
}

/**
 * The job whose bytes an attempt's files hold, in SQL (records.ts, jobOfBytes): its own job, or
 * for a copy the job of the result it points at. Every reader that names an item's job uses it.
 */
export function jobOfBytesColumn(c: LedgerContext, table = 'attempts') {
  return c.has('attempts', 'made_by_job')
    ? sql<string | null>`coalesce(${sql.ref(`${table}.job_id`)}, ${sql.ref(`${table}.made_by_job`)})`
    : sql<string | null>`${sql.ref(`${table}.job_id`)}`;
}

/**
 * The columns blanked in the summary view ('' and a null vars): at 100,000 attempts they are most
 * of the memory, and the readers of the summary (status's warnings) look at state, job and expiry.
 */
const BLANKED = new Set([
  'requestBody',
  'idempotencyKey',
  'requestHash',
  'errorMessage',
  'createdAt',
  'answeredAt',
  'completedAt',
]);

/** A SELECT of whole attempts, columns later migrations added read as their defaults where missing. */
function attemptsOf(c: LedgerContext, summary = false) {
  return c.q.selectFrom('attempts').select([
    ...BEFORE_TAKES.map((column) => {
      const alias = column.split(' as ')[1] ?? column;
      if (summary && BLANKED.has(alias)) return sql.lit('').as(alias);
      return column;
    }),
    c.column('attempts', 'take', 'take', 1).as('take'),
    (summary ? sql.lit(null) : c.column('attempts', 'vars', 'vars', null)).as('vars'),
    ...resultColumns(c),
  ]);
}

type AttemptRow = Omit<AttemptRecord, 'filesSaved'> & { filesSaved: number | boolean };

/** Converts in place: copying 100,000 rows costs more than reading them. */
export function toAttempt(row: unknown): AttemptRecord {
  const record = row as AttemptRow;
  record.filesSaved = record.filesSaved === 1 || record.filesSaved === true;
  return record as AttemptRecord;
}

/** Every attempt of the batch (of the items named, when `itemIds` is given), whole, in id order. */
export async function listAttempts(c: LedgerContext, itemIds?: readonly string[]): Promise<AttemptRecord[]> {
  if (itemIds?.length === 0) return [];
  const all = attemptsOf(c).where('batch_id', '=', c.batchId).orderBy('id');
  const query = itemIds === undefined ? all : all.where(c.db.sql.inList('item_id', itemIds));
  const rows = await c.db.read(query.compile());
  return rows.map(toAttempt);
}

export async function getAttempt(c: LedgerContext, ref: AttemptRef): Promise<AttemptRecord> {
  const [row] = await c.db.read(attemptsOf(c).where(whereAttempt(c, ref)).compile());
  if (!row) throw new Error(`the ledger has no attempt ${typeof ref === 'number' ? ref : ref.key}`);
  return toAttempt(row);
}

/**
 * An attempt's exact request and its hash, nothing else: what `plan` reads of an item whose hash
 * differs (runner/item-plan.ts, currentRequest), possibly once per item of a large batch.
 */
export async function attemptRequest(
  c: LedgerContext,
  id: number,
): Promise<Pick<AttemptRecord, 'requestBody' | 'requestHash'>> {
  const [row] = await c.db.read(
    c.q
      .selectFrom('attempts')
      .select(['request_body as requestBody', 'request_hash as requestHash'])
      .where('id', '=', id)
      .compile(),
  );
  if (!row) throw new Error(`the ledger has no attempt ${id}`);
  return row;
}

/**
 * Succeeded jobs whose files are not saved yet, in id order, without their text columns: what
 * status-report.ts's unsavedOf picks from a whole ledger, for its expiry warnings.
 */
export async function unsavedSucceeded(c: LedgerContext): Promise<AttemptRecord[]> {
  const rows = await c.db.read(
    attemptsOf(c, true)
      .where('batch_id', '=', c.batchId)
      .where('job_status', '=', 'succeeded')
      .where('files_saved', '=', 0)
      .where('expires_at', 'is not', null)
      .orderBy('id')
      .compile(),
  );
  return rows.map(toAttempt);
}

/**
 * Failed or canceled jobs whose charge the service has not refunded in full (the run's closing
 * warning), in id order: read by their condition, not found among every attempt of the batch.
 */
/**
 * Jobs the service's moderation rejected (`content_rejected`), in id order: a rejected request,
 * found again by its request key (runner/fallback.ts), is not sent again by any item of the batch
 * (docs/manifest.md, "Fallback prompts"). Whole, with their bodies (the key is made from the
 * body) and vars; a handful of rows: the filter uses attempts_open.
 */
export async function rejectedAttempts(c: LedgerContext): Promise<AttemptRecord[]> {
  const rows = await c.db.read(
    attemptsOf(c)
      .where('batch_id', '=', c.batchId)
      .where('state', '=', 'accepted')
      .where('job_status', '=', 'failed')
      .where('error_code', '=', 'content_rejected')
      .orderBy('id')
      .compile(),
  );
  return rows.map(toAttempt);
}

export async function unrefundedFailures(c: LedgerContext): Promise<AttemptRecord[]> {
  const rows = await c.db.read(
    attemptsOf(c, true)
      .where('batch_id', '=', c.batchId)
      .where('job_id', 'is not', null)
      .where('job_status', 'in', ['failed', 'canceled'])
      .where(sql<boolean>`refunded_micros <> amount_micros`)
      .orderBy('id')
      .compile(),
  );
  return rows.map(toAttempt);
}

/** False for a new ledger (or one whose runs never got as far as preparing a request). */
export async function hasAttempts(c: LedgerContext): Promise<boolean> {
  const rows = await c.db.read(
    c.q.selectFrom('attempts').select('id').where('batch_id', '=', c.batchId).limit(1).compile(),
  );
  return rows.length > 0;
}

/** The sums of moneyTotalsOf (money-totals.ts), in SQL: the runner asks before every submission. */
export function moneyTotalsQuery(c: LedgerContext) {
  const sum = (expression: ReturnType<typeof sql>) =>
    sql<number>`cast(coalesce(sum(${expression}), 0) as bigint)`;
  return c.q
    .selectFrom('attempts')
    .select([
      sum(sql`amount_micros`).as('chargedMicros'),
      sum(sql`refunded_micros`).as('refundedMicros'),
      sum(sql`CASE WHEN state = 'prepared' THEN reserved_micros ELSE 0 END`).as('reservedMicros'),
    ])
    .where('batch_id', '=', c.batchId);
}

export async function moneyTotals(c: LedgerContext): Promise<MoneyTotals> {
  const [row] = await c.db.read(moneyTotalsQuery(c).compile());
  return row!;
}
