import { type ExpressionBuilder, sql } from 'kysely';
import type { Statement } from './dialect/database.js';
import type { LedgerContext } from './ledger-context.js';
import { StatementShape } from './statement-shape.js';
import type { EventsTable, Tables } from './tables.js';

/**
 * The runs of a batch and its event log: what happened when, for people and for import. An event
 * is written by the same statements as the change it tells of, in the same transaction.
 */

/** Which attempt a statement is about: by id, or by its key when a step writes it in the same batch. */
export type AttemptRef = number | { key: string };

/** An attempt as a statement shape names it (statement-shape.ts): the values of both ways. */
export interface AttemptKey {
  id: number;
  batch_id: number;
  key: string;
}

/** Which of AttemptKey's ways names the attempt: its id, or its key in the batch. */
export type AttemptBy = 'id' | 'key';

/** `ref` as a shape's values and the way it names the attempt. */
export function attemptKey(c: LedgerContext, ref: AttemptRef): [AttemptKey, AttemptBy] {
  return typeof ref === 'number'
    ? [{ id: ref, batch_id: c.batchId, key: '' }, 'id']
    : [{ id: 0, batch_id: c.batchId, key: ref.key }, 'key'];
}

/** A WHERE on `attempts` picking the attempt `v` names, `by` its id or its key. */
export function byAttempt(v: AttemptKey, by: AttemptBy) {
  return (eb: ExpressionBuilder<Tables, 'attempts'>) =>
    by === 'id'
      ? eb('attempts.id', '=', v.id)
      : eb.and([eb('attempts.batch_id', '=', v.batch_id), eb('attempts.idempotency_key', '=', v.key)]);
}

/** A WHERE on `attempts` picking the attempt `ref` names. */
export function whereAttempt(c: LedgerContext, ref: AttemptRef) {
  return byAttempt(...attemptKey(c, ref));
}

const text = (value: string | null) => sql<string | null>`cast(${value} as text)`;

const detailOf = (detail: unknown): string | null =>
  detail === null || detail === undefined ? null : JSON.stringify(detail);

const eventRow = new StatementShape((c, v: Omit<EventsTable, 'id'>) => c.q.insertInto('events').values(v));

/** One event whose every value is known here; `detail` is stored as JSON. */
export function eventOf(
  c: LedgerContext,
  itemId: string | null,
  attemptId: number | null,
  kind: string,
  detail: unknown,
): Statement {
  return eventRow.bind(c, {
    at: c.at(),
    batch_id: c.batchId,
    item_id: itemId,
    attempt_id: attemptId,
    kind,
    detail: detailOf(detail),
  });
}

/**
 * What narrows an attempt's event further: written only when the attempt was created at this
 * time (by this step), or when the job's status is not already this one (it changed).
 */
export type EventGuard = { createdAt: string } | { statusNot: string };

const attemptEvent = new StatementShape(
  (
    c,
    v: AttemptKey & { at: string; kind: string; detail: string | null; guard: string },
    variant: `${AttemptBy}:${'none' | 'createdAt' | 'statusNot'}`,
  ) => {
    const [by, guard] = variant.split(':') as [AttemptBy, string];
    const rows = c.q
      .selectFrom('attempts')
      .select([
        'batch_id',
        'item_id',
        'id',
        text(v.at).as('at'),
        text(v.kind).as('kind'),
        text(v.detail).as('detail'),
      ])
      .where(byAttempt(v, by));
    const guarded =
      guard === 'createdAt'
        ? rows.where('attempts.created_at', '=', v.guard)
        : guard === 'statusNot'
          ? rows.where((eb) =>
              eb.or([eb('attempts.job_status', 'is', null), eb('attempts.job_status', '<>', v.guard)]),
            )
          : rows;
    return c.q
      .insertInto('events')
      .columns(['batch_id', 'item_id', 'attempt_id', 'at', 'kind', 'detail'])
      .expression(guarded);
  },
);

/**
 * An event about an attempt, its item and id read from the attempt's row by the statement itself,
 * so a step needs no read first; nothing is written when no row matches (or `guard` does not hold).
 */
export function attemptEventOf(
  c: LedgerContext,
  ref: AttemptRef,
  kind: string,
  detail: unknown,
  guard?: EventGuard,
): Statement {
  const [attempt, by] = attemptKey(c, ref);
  const [guardKind, guardValue] =
    guard === undefined
      ? (['none', ''] as const)
      : 'createdAt' in guard
        ? (['createdAt', guard.createdAt] as const)
        : (['statusNot', guard.statusNot] as const);
  const values = { ...attempt, at: c.at(), kind, detail: detailOf(detail), guard: guardValue };
  return attemptEvent.bind(c, values, `${by}:${guardKind}`);
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
  const shared = c.can.severalRunners ? { runner: c.runnerId, heartbeat_at: sql`now()` } : {};
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
  const shared = c.can.severalRunners ? { heartbeat_at: null } : {};
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
