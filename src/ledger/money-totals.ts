import type { Micros } from '../money.js';
import type { AttemptRecord, MoneyTotals } from './records.js';

/**
 * How a batch's money adds up, in one place: what was charged and refunded over every attempt of
 * every run, what unanswered attempts still hold in reserve, what was spent (charged net of
 * refunds) and what is left of the budget. Ledger.moneyTotals() computes the same sums in SQL for
 * the runner, which asks before every submission.
 */
type AttemptMoney = Pick<AttemptRecord, 'state' | 'amountMicros' | 'refundedMicros' | 'reservedMicros'>;

export function moneyTotalsOf(attempts: Iterable<AttemptMoney>): MoneyTotals {
  let chargedMicros = 0;
  let refundedMicros = 0;
  let reservedMicros = 0;
  for (const attempt of attempts) {
    chargedMicros += attempt.amountMicros;
    refundedMicros += attempt.refundedMicros;
    // Only an attempt waiting for its answer holds a reservation; an answer releases it.
    if (attempt.state === 'prepared') reservedMicros += attempt.reservedMicros;
  }
  return { chargedMicros, refundedMicros, reservedMicros };
}

/** Charged net of refunds: what the budget counts as spent. */
export function spentMicros(totals: Pick<MoneyTotals, 'chargedMicros' | 'refundedMicros'>): Micros {
  return totals.chargedMicros - totals.refundedMicros;
}

/** What one attempt cost in the end (a failed job's charge comes back as a refund). */
export function attemptSpentMicros(attempt: Pick<AttemptRecord, 'amountMicros' | 'refundedMicros'>): Micros {
  return attempt.amountMicros - attempt.refundedMicros;
}

/**
 * What is left of budget_usd: spent and reserved money both count, so that requests in flight can
 * never together pass the budget. Null without a budget.
 */
export function budgetLeftMicros(budgetMicros: Micros | null, totals: MoneyTotals): Micros | null {
  return budgetMicros === null ? null : budgetMicros - spentMicros(totals) - totals.reservedMicros;
}
