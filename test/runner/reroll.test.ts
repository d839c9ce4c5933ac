import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BudgetState, reserveBudget } from '../../src/runner/budget.js';
import { mayReroll, rerollWords } from '../../src/runner/reroll.js';

/** Re-rolls (docs/checks.md): the decision itself, and a property of it under the run's budget rule. */

describe('mayReroll', () => {
  it('buys again while the failed takes are at most the re-rolls, never before a take failed', () => {
    expect([0, 1, 2, 3].map((failed) => mayReroll(failed, 0))).toEqual([false, false, false, false]);
    expect([0, 1, 2, 3].map((failed) => mayReroll(failed, 2))).toEqual([false, true, true, false]);
    expect(mayReroll(10, 10)).toBe(true);
    expect(mayReroll(11, 10)).toBe(false);
    expect(rerollWords(2, 3)).toBe('re-roll 2 of 3');
  });
});

interface Item {
  cap: number | null;
  price: number;
  /** Whether each take (first, then re-rolls) fails its check; past the list, it passes. */
  fails: boolean[];
  rerolls: number;
}

/**
 * A run as the runner plays it, in rounds: every item waiting sends a take when its reservation
 * fits (reserveBudget, the run's rule), breadth first (each round every item's next take, in order),
 * the take's price is spent and its reservation released, a failed take is bought again while
 * mayReroll says so. A take that does not fit ends its item. Returns what was spent and bought.
 */
function play(budget: number | null, items: readonly Item[]) {
  const state: BudgetState = { budgetMicros: budget, spentMicros: 0, reservedMicros: 0 };
  const takes = items.map(() => 0);
  const order: number[] = [];
  let waiting = items.map((_, index) => index);
  while (waiting.length > 0) {
    const next: number[] = [];
    for (const index of waiting) {
      const item = items[index]!;
      const reservation = reserveBudget(state, item.cap);
      if (reservation.kind === 'no_room') continue;
      // The service refuses a job whose price passes the max_cost_usd sent: nothing is charged.
      if (reservation.maxCostMicros !== null && item.price > reservation.maxCostMicros) continue;
      state.spentMicros += item.price;
      takes[index] = takes[index]! + 1;
      order.push(index);
      const failed = item.fails[takes[index]! - 1] ?? false;
      if (failed && mayReroll(takes[index]!, item.rerolls)) next.push(index);
    }
    waiting = next;
  }
  return { spent: state.spentMicros, takes, order };
}

const item = fc.record({
  cap: fc.option(fc.integer({ min: 1, max: 500_000 }), { nil: null }),
  price: fc.integer({ min: 1, max: 500_000 }),
  fails: fc.array(fc.boolean(), { maxLength: 12 }),
  rerolls: fc.integer({ min: 0, max: 10 }),
});

describe('re-rolls under budget_usd (property)', () => {
  it('never spend past the budget, never buy more than 1 + rerolls takes, and go breadth first', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 0, max: 3_000_000 }), { nil: null }),
        fc.array(item, { minLength: 1, maxLength: 8 }),
        (budget, items) => {
          const { spent, takes, order } = play(budget, items);
          if (budget !== null) expect(spent).toBeLessThanOrEqual(budget);
          items.forEach((it, index) => {
            expect(takes[index]).toBeLessThanOrEqual(1 + it.rerolls);
            // A re-roll only after a failed take: every take but the last failed.
            const bought = takes[index]!;
            for (let take = 1; take < bought; take += 1) expect(it.fails[take - 1]).toBe(true);
          });
          // Breadth first: the n-th take of any item comes after every item's (n-1)-th take sent.
          const seen = items.map(() => 0);
          const rounds = order.map((index) => (seen[index] = seen[index]! + 1));
          for (let at = 1; at < rounds.length; at += 1)
            expect(rounds[at]! >= rounds[at - 1]! || rounds[at]! === 1).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
