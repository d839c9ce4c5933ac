import { sql } from 'kysely';
import type { NewAttempt } from './attempt-writes.js';
import type { Statement } from './dialect/database.js';
import { leaseUntil, unleased } from './leases.js';
import type { LedgerContext } from './ledger-context.js';

/** The statements of a shared ledger's claims (claims.ts): PostgreSQL's, leases judged by its clock. */

/** Unanswered POSTs and unfinished jobs of the batch, every runner's: what holds the service's slots. */
export function openJobsQuery(c: LedgerContext): Statement {
  return c.q
    .selectFrom('attempts')
    .select(sql<number>`count(*)`.as('open'))
    .where('batch_id', '=', c.batchId)
    .where((eb) =>
      eb.or([
        eb('state', '=', 'prepared'),
        eb.and([eb('state', '=', 'accepted'), eb('job_status', 'in', ['queued', 'running'])]),
      ]),
    )
    .compile();
}

/** The newest attempt's seq of an item (0: none), as a subquery. */
export function latestSeq(c: LedgerContext, itemId: string) {
  return c.q
    .selectFrom('attempts as l')
    .select(sql<number>`coalesce(max(l.seq), 0)`.as('latest'))
    .where('l.batch_id', '=', c.batchId)
    .where('l.item_id', '=', itemId);
}

/**
 * The attempts' items as admission needs them (admission.ts, Candidate), their rows locked until
 * the step commits: no other runner's claim slips in between this read and the claim.
 */
export function candidatesQuery(
  c: LedgerContext,
  runnerId: string,
  attempts: readonly NewAttempt[],
): Statement {
  return c.q
    .selectFrom('items as i')
    .select([
      'i.item_id as itemId',
      unleased(runnerId, 'i').as('free'),
      (eb) =>
        eb
          .selectFrom('attempts as l')
          .select(sql<number>`coalesce(max(l.seq), 0)`.as('latest'))
          .where('l.batch_id', '=', c.batchId)
          .whereRef('l.item_id', '=', 'i.item_id')
          .as('latest'),
    ])
    .where('i.batch_id', '=', c.batchId)
    .where(
      'i.item_id',
      'in',
      attempts.map((attempt) => attempt.itemId),
    )
    .forUpdate()
    .compile();
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
