import { type RawBuilder, sql } from 'kysely';
import type { NewAttempt } from './attempt-prepare.js';
import type { Statement } from './dialect/database.js';
import { leaseUntil, unleased } from './leases.js';
import type { Admission } from './ledger.js';
import type { LedgerContext } from './ledger-context.js';

/** The statements of a shared ledger's claims (claims.ts): PostgreSQL's, leases judged by its clock. */

/** The batch's slots in use: unanswered POSTs and unfinished jobs of every runner, as a subquery. */
const openSlots = (c: LedgerContext) => sql`(SELECT count(*) FROM attempts WHERE batch_id = ${c.batchId}
  AND (state = 'prepared' OR (state = 'accepted' AND job_status IN ('queued', 'running'))))`;

/**
 * What admission (claims.ts) reads once, under the batch's lock, for the rest of its transaction:
 * spent and reserved money of every runner, and the batch's open slots (unanswered POSTs and
 * unfinished jobs), each summed once over the batch's attempts rather than per attempt, kept in
 * settings local to the transaction that each admitted attempt then adds itself to (verdictOf).
 * The money is summed only when a budget binds: it reads every attempt of the batch, and a batch
 * without one would pay that at every admission for nothing (docs/performance.md).
 */
export function admissionBase(c: LedgerContext, admission: Admission): Statement {
  return sql`SELECT set_config('mediabatch.committed', cast(CASE WHEN ${budgetOf(c, admission)} IS NULL THEN 0 ELSE (
      SELECT coalesce(sum(amount_micros - refunded_micros + CASE WHEN state = 'prepared' THEN reserved_micros ELSE 0 END), 0)
      FROM attempts WHERE batch_id = ${c.batchId}) END as text), true),
    set_config('mediabatch.open', cast(${openSlots(c)} as text), true)`.compile(c.q);
}

/**
 * The attempts' items' rows, locked until the step commits: no other runner's claim slips in
 * between an admission's checks and its claim. Locked in the order of their ids, and without the
 * key lock that a foreign key's check (another runner's event or attempt of the item) waits on.
 */
export function lockItems(c: LedgerContext, attempts: readonly NewAttempt[]): Statement {
  return c.q
    .selectFrom('items')
    .select('item_id')
    .where('batch_id', '=', c.batchId)
    .where(
      'item_id',
      'in',
      attempts.map((attempt) => attempt.itemId),
    )
    .orderBy('item_id')
    .forNoKeyUpdate()
    .compile();
}

/** The batch's slots in use as the step ends, its own attempts among them: counted again. */
export function inUseAfter(c: LedgerContext): Statement {
  return sql<{ inUse: string }>`SELECT ${openSlots(c)} AS "inUse"`.compile(c.q);
}

/** The batch's current revision, as a subquery (null: none written). */
const currentOf = (c: LedgerContext, column: 'revision' | 'budget_micros') =>
  sql`(SELECT ${sql.ref(column)} FROM batch_definitions WHERE batch_id = ${c.batchId} ORDER BY revision DESC LIMIT 1)`;

/** The budget admission binds to: the current revision's, else the runner's (null: none). */
const budgetOf = (c: LedgerContext, admission: Admission) =>
  sql`CASE WHEN ${currentOf(c, 'revision')} IS NULL THEN cast(${admission.budgetMicros} as bigint) ELSE ${currentOf(c, 'budget_micros')} END`;

/**
 * Whether one attempt is admitted, as the database stands when the statement runs, after the
 * attempts before it in the same step: 'admit'; 'redefined' when the batch has another revision
 * than the runner's; 'noRoom' when every slot of the batch is taken (unanswered POSTs and
 * unfinished jobs of every runner) or its reservation does not fit what is left of the budget
 * (the current revision's, else the runner's) after every charge and reservation; 'elsewhere'
 * when its item is not this runner's to work (a live lease of another runner holds it, or a
 * runner sent a newer attempt of it than the one this runner knew). As the runner's own budget
 * check does, an attempt whose reservation does not fit lets a smaller one after it go.
 */
function admissionOf(
  c: LedgerContext,
  runnerId: string,
  attempt: NewAttempt,
  admission: Admission,
): RawBuilder<string> {
  const b = c.batchId;
  const revision = sql`cast(${admission.revision ?? null} as integer)`;
  const current = currentOf(c, 'revision');
  const budget = budgetOf(c, admission);
  const claimable = sql`EXISTS (SELECT 1 FROM items i WHERE i.batch_id = ${b} AND i.item_id = ${attempt.itemId}
      AND ${unleased(runnerId, 'i')})
    AND (SELECT coalesce(max(seq), 0) FROM attempts WHERE batch_id = ${b} AND item_id = ${attempt.itemId}) = cast(${attempt.seq - 1} as integer)`;
  return sql<string>`CASE
    WHEN ${revision} IS NOT NULL AND ${current} IS NOT NULL AND ${current} <> ${revision} THEN 'redefined'
    WHEN ${OPEN} >= cast(${admission.slotLimit} as bigint) THEN 'noRoom'
    WHEN ${budget} IS NOT NULL AND ${COMMITTED} + cast(${attempt.reservedMicros} as bigint) > ${budget} THEN 'noRoom'
    WHEN NOT (${claimable}) THEN 'elsewhere'
    ELSE 'admit' END`;
}

const OPEN = sql`cast(current_setting('mediabatch.open') as bigint)`;
const COMMITTED = sql`cast(current_setting('mediabatch.committed') as bigint)`;

/**
 * An attempt's verdict (admissionOf), kept for the claim and the insert after it (a setting local
 * to the step, attempt-prepare.ts, ADMITTED); an admitted attempt adds its slot and reservation to
 * the step's counts. An admitted attempt is always written (its key and seq are new: else it is
 * 'elsewhere'), so the counts need no look at the attempts this step wrote, which a plan made
 * while the table was small read with a scan of the table (docs/performance.md). OFFSET 0 keeps
 * the verdict a subquery judged once, before the settings change.
 */
export function verdictOf(
  c: LedgerContext,
  runnerId: string,
  attempt: NewAttempt,
  admission: Admission,
): Statement {
  const admitted = (amount: RawBuilder<unknown>) =>
    sql`CASE WHEN v.verdict = 'admit' THEN ${amount} ELSE 0 END`;
  return sql<{ verdict: string; revision: number | null }>`SELECT
      set_config('mediabatch.verdict', v.verdict, true) AS verdict,
      set_config('mediabatch.open', cast(${OPEN} + ${admitted(sql`1`)} as text), true) AS open,
      set_config('mediabatch.committed',
        cast(${COMMITTED} + ${admitted(sql`cast(${attempt.reservedMicros} as bigint)`)} as text), true) AS committed,
      ${currentOf(c, 'revision')} AS revision
    FROM (SELECT ${admissionOf(c, runnerId, attempt, admission)} AS verdict OFFSET 0) AS v`.compile(c.q);
}

/** The newest attempt's seq of an item (0: none), as a subquery. */
export function latestSeq(c: LedgerContext, itemId: string) {
  return c.q
    .selectFrom('attempts as l')
    .select(sql<number>`coalesce(max(l.seq), 0)`.as('latest'))
    .where('l.batch_id', '=', c.batchId)
    .where('l.item_id', '=', itemId);
}

/** Takes these items' leases where no live lease of another runner holds them; returns those taken. */
export function claimFree(
  c: LedgerContext,
  runnerId: string,
  leaseMs: number,
  itemIds: readonly string[],
): Statement {
  return c.q
    .updateTable('items')
    .set({ claimed_by: runnerId, lease_until: leaseUntil(leaseMs) })
    .where('batch_id', '=', c.batchId)
    .where('item_id', 'in', itemIds)
    .where(unleased(runnerId))
    .returning('item_id as itemId')
    .compile();
}

/** A heartbeat younger than a lease: a live runner, on any machine. */
const alive = (leaseMs: number) =>
  sql<boolean>`ended_at IS NULL AND heartbeat_at > now() - make_interval(secs => cast(${leaseMs} as double precision) / 1000)`;

/** Runs of the batch whose heartbeat is younger than `leaseMs`. */
export function liveRunsQuery(c: LedgerContext, leaseMs: number): Statement {
  return c.q
    .selectFrom('runs')
    .select(sql<number>`count(*)`.as('live'))
    .where('batch_id', '=', c.batchId)
    .where(alive(leaseMs))
    .compile();
}

/** The machines of the batch's live runners (a runner's id starts with its host name). */
export function liveHostsQuery(c: LedgerContext, leaseMs: number): Statement {
  return c.q
    .selectFrom('runs')
    .select(sql<string>`split_part(runner, ':', 1)`.as('host'))
    .distinct()
    .where('batch_id', '=', c.batchId)
    .where('runner', 'is not', null)
    .where(alive(leaseMs))
    .compile();
}

/** Whether the attempts table has never been analysed (pg_class says -1 rows): a fresh database. */
export function neverAnalysedQuery(c: LedgerContext): Statement {
  return sql<{
    never: boolean;
  }>`SELECT reltuples < 0 AS never FROM pg_class WHERE oid = to_regclass('attempts')`.compile(c.q);
}

/**
 * Statistics for the tables a step reads by key. Each connection plans its named statements once
 * (postgres.ts, #nameOf), and a plan made while a fresh database's attempts table was empty and
 * never analysed reads every attempt of the batch by its batch id alone, on every call; an
 * ANALYZE makes the server plan them again, now knowing one batch id selects every row.
 */
export function analyseStatement(c: LedgerContext): Statement {
  return sql`ANALYZE attempts, events, items`.compile(c.q);
}

/**
 * The items a runner would offer next (Admission.ahead): those no other runner works it leases
 * now, so that other runners' offers pass them by; the rest are another runner's (a live lease
 * of another runner holds it, or an attempt newer than the one the runner knew exists). Runners
 * walk the same queue in the same order: between one admission and the next, the others took
 * the very items it had found free. Returns the items leased now (`mine`; one it holds already
 * is not written again) and those another runner works; an item without a row (sent only on
 * request, unsent-items.ts) is neither.
 */
export function leaseAheadQuery(
  c: LedgerContext,
  runnerId: string,
  leaseMs: number,
  ahead: ReadonlyArray<{ itemId: string; seq: number }>,
): Statement {
  const b = c.batchId;
  const ids = ahead.map((each) => each.itemId);
  const seqs = ahead.map((each) => each.seq);
  const latest = sql`(SELECT coalesce(max(t.seq), 0) FROM attempts t WHERE t.batch_id = ${b} AND t.item_id = a.item_id)`;
  return sql<{ itemId: string; mine: boolean }>`WITH a AS (
      SELECT * FROM unnest(cast(${ids} as text[]), cast(${seqs} as integer[])) AS a(item_id, seq)),
    mine AS (UPDATE items i SET claimed_by = ${runnerId}, lease_until = ${leaseUntil(leaseMs)} FROM a
      WHERE i.batch_id = ${b} AND i.item_id = a.item_id AND ${unleased(runnerId, 'i')} AND ${latest} = a.seq
        AND NOT ${ownLive(runnerId)}
      RETURNING i.item_id)
    SELECT a.item_id AS "itemId", a.item_id IN (SELECT item_id FROM mine) AS mine FROM a
    WHERE a.item_id IN (SELECT item_id FROM mine)
      OR EXISTS (SELECT 1 FROM items i WHERE i.batch_id = ${b} AND i.item_id = a.item_id AND NOT ${unleased(runnerId, 'i')})
      OR ${latest} <> a.seq`.compile(c.q);
}

/** An item row this runner holds a live lease on: renewals extend it, a claim need not write it again. */
function ownLive(runnerId: string): RawBuilder<boolean> {
  return sql<boolean>`(i.claimed_by IS NOT DISTINCT FROM ${runnerId} AND i.lease_until >= now())`;
}
