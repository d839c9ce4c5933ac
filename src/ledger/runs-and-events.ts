import { type ExpressionBuilder, sql } from 'kysely';
import type { Statement } from './dialect/database.js';
import type { LedgerContext } from './ledger-context.js';
import type { Tables } from './tables.js';

/**
 * The runs of a batch and its event log: what happened when, for people and for import. An event
 * is written by the same statements as the change it tells of, in the same transaction.
 */

/** Which attempt a statement is about: by id, or by its key when a step writes it in the same batch. */
export type AttemptRef = number | { key: string };

/** A WHERE on `attempts` picking the attempt `ref` names. */
export function whereAttempt(c: LedgerContext, ref: AttemptRef) {
  return (eb: ExpressionBuilder<Tables, 'attempts'>) =>
    typeof ref === 'number'
      ? eb('attempts.id', '=', ref)
      : eb.and([eb('attempts.batch_id', '=', c.batchId), eb('attempts.idempotency_key', '=', ref.key)]);
}

const text = (value: string | null) => sql<string | null>`cast(${value} as text)`;

const detailOf = (detail: unknown): string | null =>
  detail === null || detail === undefined ? null : JSON.stringify(detail);

/** One event whose every value is known here; `detail` is stored as JSON. */
export function eventOf(
  c: LedgerContext,
  itemId: string | null,
  attemptId: number | null,
  kind: string,
  detail: unknown,
): Statement {
  return c.q
    .insertInto('events')
    .values({
      at: c.at(),
      batch_id: c.batchId,
      item_id: itemId,
      attempt_id: attemptId,
      kind,
      detail: detailOf(detail),
    })
    .compile();
}

/**
 * An event about an attempt, its item and id read from the attempt's row by the statement itself,
 * so a step needs no read first; nothing is written when no row matches (`also` narrows further:
 * only when the job's status changes, say).
 */
export function attemptEventOf(
  c: LedgerContext,
  ref: AttemptRef,
  kind: string,
  detail: unknown,
  also?: (eb: ExpressionBuilder<Tables, 'attempts'>) => ReturnType<ReturnType<typeof whereAttempt>>,
): Statement {
  const rows = c.q
    .selectFrom('attempts')
    .select([
      text(c.at()).as('at'),
      'batch_id',
      'item_id',
      'id',
      text(kind).as('kind'),
      text(detailOf(detail)).as('detail'),
    ])
    .where(whereAttempt(c, ref));
  return c.q
    .insertInto('events')
    .columns(['at', 'batch_id', 'item_id', 'attempt_id', 'kind', 'detail'])
    .expression(also ? rows.where(also) : rows)
    .compile();
}

export async function appendEvent(
  c: LedgerContext,
  itemId: string | null,
  attemptId: number | null,
  kind: string,
  detail: unknown,
): Promise<void> {
  await c.db.batch([eventOf(c, itemId, attemptId, kind, detail)]);
}

/** A shared ledger's run names its runner and beats a heartbeat that says it is alive (claims.ts). */
export async function startRun(c: LedgerContext, pid: number): Promise<number> {
  const shared = c.kind === 'postgres' ? { runner: c.runnerId, heartbeat_at: sql`now()` } : {};
  const [inserted] = await c.db.batch([
    c.q
      .insertInto('runs')
      .values({ batch_id: c.batchId, pid, started_at: c.at(), ended_at: null, exit_code: null, ...shared })
      .returning('id')
      .compile(),
  ]);
  return Number(inserted!.rows[0].id);
}

/** An ended run beats no more: no runner takes it for a live one. */
export async function endRun(c: LedgerContext, runId: number, exitCode: number): Promise<void> {
  const shared = c.kind === 'postgres' ? { heartbeat_at: null } : {};
  await c.db.batch([
    c.q
      .updateTable('runs')
      .set({ ended_at: c.at(), exit_code: exitCode, ...shared })
      .where('id', '=', runId)
      .compile(),
  ]);
}

export async function lastRun(c: LedgerContext): Promise<{ pid: number; startedAt: string } | null> {
  const [row] = await c.db.read(
    c.q
      .selectFrom('runs')
      .select(['pid', 'started_at as startedAt'])
      .where('batch_id', '=', c.batchId)
      .orderBy('id', 'desc')
      .limit(1)
      .compile(),
  );
  return row ?? null;
}
