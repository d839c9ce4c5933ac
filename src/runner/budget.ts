import type { Micros } from '../money.js';

export interface BudgetState {
  budgetMicros: Micros | null;
  /** Sum over this manifest's jobs of amount - refunded, all runs. */
  spentMicros: Micros;
  /** Reservations of attempts sent but not yet answered. */
  reservedMicros: Micros;
}

export type Reservation =
  | { kind: 'reserved'; reserveMicros: Micros; maxCostMicros: Micros | null; capFromBudget: boolean }
  | { kind: 'no_room'; needMicros: Micros | null; remainingMicros: Micros };

/**
 * The most a request can cost is reserved before it is sent, so spent + reserved never passes the
 * budget however many POSTs are in flight. Without a per-item cap, the whole remaining budget is
 * the cap: such requests go one at a time, each learning its real cost.
 * `refusedCapMicros` is the largest budget-derived cap the service already refused for this item
 * (max_cost_exceeded): the job costs more than that, so it does not fit until more is left.
 */
export function reserveBudget(
  state: BudgetState,
  itemCapMicros: Micros | null,
  refusedCapMicros: Micros | null = null,
): Reservation {
  if (state.budgetMicros === null) {
    return {
      kind: 'reserved',
      reserveMicros: itemCapMicros ?? 0,
      maxCostMicros: itemCapMicros,
      capFromBudget: false,
    };
  }
  const remaining = leftOf(state.budgetMicros, state);
  if (itemCapMicros !== null) {
    return itemCapMicros <= remaining
      ? { kind: 'reserved', reserveMicros: itemCapMicros, maxCostMicros: itemCapMicros, capFromBudget: false }
      : { kind: 'no_room', needMicros: itemCapMicros, remainingMicros: remaining };
  }
  return remaining > 0 && (refusedCapMicros === null || remaining > refusedCapMicros)
    ? { kind: 'reserved', reserveMicros: remaining, maxCostMicros: remaining, capFromBudget: true }
    : { kind: 'no_room', needMicros: null, remainingMicros: remaining };
}

export function remainingBudget(state: BudgetState): Micros | null {
  return state.budgetMicros === null ? null : leftOf(state.budgetMicros, state);
}

/** Spent and reserved money both count, so requests in flight can never together pass the budget. */
function leftOf(budgetMicros: Micros, state: BudgetState): Micros {
  return budgetMicros - state.spentMicros - state.reservedMicros;
}

/**
 * The run's rule as plan foresees it, item after item in manifest order: an item is sent only when
 * its reservation fits (reserveBudget: its max_cost_usd cap, or all that is left without one), and
 * once answered the reservation is released and its price is spent. An item without a cap whose
 * price is known is refused by the service (max_cost_exceeded) while less than that price is left,
 * exactly as a run learns it. A run decides an item that does not fit only when nothing in flight
 * can free budget, so the order of answers does not change what fits.
 */
export function foreseeSend(
  leftMicros: Micros | null,
  itemCapMicros: Micros | null,
  priceMicros: Micros | null,
): { fits: true; leftMicros: Micros | null } | { fits: false } {
  const refused = itemCapMicros === null && priceMicros !== null ? priceMicros - 1 : null;
  const reservation = reserveBudget(
    { budgetMicros: leftMicros, spentMicros: 0, reservedMicros: 0 },
    itemCapMicros,
    refused,
  );
  if (reservation.kind === 'no_room') return { fits: false };
  // An unknown price (no cap, nothing seen) leaves what is left as it was: nothing says how much.
  const spent = priceMicros ?? 0;
  return { fits: true, leftMicros: leftMicros === null ? null : leftMicros - spent };
}

/** The prices charged so far (the newest of each kind of request), lowest and highest. */
export interface PricesSeen {
  lowMicros: Micros;
  highMicros: Micros;
}

export function pricesSeenOf(amounts: Iterable<Micros>): PricesSeen | null {
  let seen: PricesSeen | null = null;
  for (const micros of amounts) {
    seen = seen
      ? { lowMicros: Math.min(seen.lowMicros, micros), highMicros: Math.max(seen.highMicros, micros) }
      : { lowMicros: micros, highMicros: micros };
  }
  return seen;
}
