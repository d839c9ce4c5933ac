import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BudgetState, remainingBudget, reserveBudget } from '../../src/runner/budget.js';

describe('reserveBudget', () => {
  it('reserves the item cap without a budget, and nothing when there is no cap', () => {
    const open: BudgetState = { budgetMicros: null, spentMicros: 5, reservedMicros: 5 };
    expect(reserveBudget(open, 1_000_000)).toEqual({
      kind: 'reserved',
      reserveMicros: 1_000_000,
      maxCostMicros: 1_000_000,
      capFromBudget: false,
    });
    expect(reserveBudget(open, null)).toEqual({
      kind: 'reserved',
      reserveMicros: 0,
      maxCostMicros: null,
      capFromBudget: false,
    });
  });

  it('reserves the cap when it fits and refuses it when it does not', () => {
    const state: BudgetState = { budgetMicros: 3_000_000, spentMicros: 1_000_000, reservedMicros: 1_000_000 };
    expect(reserveBudget(state, 1_000_000)).toMatchObject({ kind: 'reserved', reserveMicros: 1_000_000 });
    expect(reserveBudget(state, 1_000_001)).toEqual({
      kind: 'no_room',
      needMicros: 1_000_001,
      remainingMicros: 1_000_000,
    });
  });

  it('without a cap, sends and reserves the whole remaining budget', () => {
    const state: BudgetState = { budgetMicros: 3_000_000, spentMicros: 500_000, reservedMicros: 0 };
    expect(reserveBudget(state, null)).toEqual({
      kind: 'reserved',
      reserveMicros: 2_500_000,
      maxCostMicros: 2_500_000,
      capFromBudget: true,
    });
    expect(reserveBudget({ ...state, spentMicros: 3_000_000 }, null)).toMatchObject({ kind: 'no_room' });
  });

  it('never lets spent + reserved pass the budget, whatever the order of reservations, answers and refunds', () => {
    // Model: reservations are taken, then each is answered with a cost at most its cap (the
    // service enforces max_cost_usd), and some answered jobs are later refunded.
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('reserve' as const),
        cap: fc.option(fc.integer({ min: 1, max: 3_000_000 }), { nil: null }),
      }),
      fc.record({
        kind: fc.constant('answer' as const),
        pick: fc.nat(),
        costShare: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      fc.record({ kind: fc.constant('refund' as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.array(step, { maxLength: 60 }),
        (budget, steps) => {
          let spent = 0;
          const reservations: number[] = [];
          const charged: number[] = [];
          for (const s of steps) {
            if (s.kind === 'reserve') {
              const reserved = reservations.reduce((a, b) => a + b, 0);
              const decision = reserveBudget(
                { budgetMicros: budget, spentMicros: spent, reservedMicros: reserved },
                s.cap,
              );
              if (decision.kind === 'reserved') reservations.push(decision.reserveMicros);
            } else if (s.kind === 'answer' && reservations.length > 0) {
              const [cap] = reservations.splice(s.pick % reservations.length, 1);
              const cost = Math.floor(cap! * s.costShare);
              spent += cost;
              charged.push(cost);
            } else if (s.kind === 'refund' && charged.length > 0) {
              const [cost] = charged.splice(s.pick % charged.length, 1);
              spent -= cost!;
            }
            const reserved = reservations.reduce((a, b) => a + b, 0);
            expect(spent + reserved).toBeLessThanOrEqual(budget);
            expect(
              remainingBudget({ budgetMicros: budget, spentMicros: spent, reservedMicros: reserved }),
            ).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });
});

describe('reserveBudget without a per-item cap, after a refused budget cap', () => {
  const state: BudgetState = { budgetMicros: 1_000, spentMicros: 200, reservedMicros: 300 };
  it('reserves what is left when that is more than the cap the service refused', () => {
    expect(reserveBudget(state, null, 499)).toEqual({
      kind: 'reserved',
      reserveMicros: 500,
      maxCostMicros: 500,
      capFromBudget: true,
    });
  });
  it('waits while what is left is no more than the refused cap, or nothing is left', () => {
    expect(reserveBudget(state, null, 500)).toEqual({
      kind: 'no_room',
      needMicros: null,
      remainingMicros: 500,
    });
    expect(reserveBudget({ ...state, reservedMicros: 800 }, null)).toEqual({
      kind: 'no_room',
      needMicros: null,
      remainingMicros: 0,
    });
  });
});

describe('remainingBudget', () => {
  it('is the budget minus spent minus reserved, or null without a budget', () => {
    expect(remainingBudget({ budgetMicros: 1_000, spentMicros: 200, reservedMicros: 300 })).toBe(500);
    expect(remainingBudget({ budgetMicros: null, spentMicros: 200, reservedMicros: 300 })).toBeNull();
  });
});
