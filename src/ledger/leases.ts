import { type RawBuilder, sql } from 'kysely';
import type { LedgerContext } from './ledger-context.js';
import type { ItemState } from './records.js';

/**
 * A shared (PostgreSQL) ledger's leases, as the item steps and the claims (claims.ts) write them.
 * The database's clock judges every lease, so runners on machines whose clocks disagree still
 * agree on who holds what. A SQLite ledger has one run: no leases, and none of this is used.
 */

/** When a lease taken or renewed now runs out. */
export function leaseUntil(leaseMs: number): RawBuilder<Date> {
  return sql<Date>`now() + make_interval(secs => cast(${leaseMs} as double precision) / 1000)`;
}

/** An item row `runnerId` may work: no live lease of another runner holds it. */
export function unleased(runnerId: string, table = 'items'): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${table}.${name}`);
  return sql<boolean>`(${column('claimed_by')} IS NULL OR ${column('claimed_by')} = ${runnerId} OR ${column('lease_until')} < now())`;
}

/** A state in which an item is no longer worked: its runner lets its lease go. */
export function settles(state: ItemState): boolean {
  return state !== 'pending' && state !== 'in_flight';
}

/** Whether this runner lets an item's lease go as it writes `state`: it settles it on a shared ledger. */
export function letsLeaseGo(c: LedgerContext, state: ItemState): boolean {
  return c.can.severalRunners && c.runnerId !== null && settles(state);
}

/**
 * The lease columns of an item `runnerId` settles (letsLeaseGo): let go in the same statement, so
 * the release that follows (RunnerClaims.release) has nothing left to send.
 */
export function leaseLetGo(runnerId: string): Record<'claimed_by' | 'lease_until', RawBuilder<null>> {
  const mine = sql`claimed_by = ${runnerId}`;
  return {
    claimed_by: sql<null>`CASE WHEN ${mine} THEN NULL ELSE claimed_by END`,
    lease_until: sql<null>`CASE WHEN ${mine} THEN NULL ELSE lease_until END`,
  };
}
