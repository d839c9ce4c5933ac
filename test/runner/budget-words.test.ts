import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foreseeSend, pricesSeenOf, reserveBudget } from '../../src/runner/budget.js';
import { notFittingLine, pricesSeenWords, shortfallWords, wayOut } from '../../src/runner/budget-words.js';

const usd = (dollars: number) => Math.round(dollars * 1_000_000);
const seen = (...dollars: number[]) => pricesSeenOf(dollars.map(usd));

describe('foreseeSend (plan) follows reserveBudget (run)', () => {
  it('counts the reservation at the cap, then spends the price: $1.30 left, cap $0.50, price $0.20 fits 5', () => {
    let left: number | null = usd(1.3);
    let fitted = 0;
    for (let i = 0; i < 14; i++) {
      const step = foreseeSend(left, usd(0.5), usd(0.2));
      if (!step.fits) continue;
      fitted += 1;
      left = step.leftMicros;
    }
    expect(fitted).toBe(5);
    expect(left).toBe(usd(0.3));
  });

  it('fits exactly when the run would reserve, one request at a time, answered at its price', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1_000_000, max: 5_000_000 }),
        fc.option(fc.integer({ min: 1, max: 2_000_000 }), { nil: null }),
        fc.integer({ min: 1, max: 2_000_000 }),
        (left, cap, price) => {
          const run = reserveBudget({ budgetMicros: left, spentMicros: 0, reservedMicros: 0 }, cap);
          // Without a cap the run sends all that is left as the cap: the service charges the price if it fits.
          const runFits = run.kind === 'reserved' && (cap !== null || price <= left);
          const planned = foreseeSend(left, cap, price);
          expect(planned.fits).toBe(runFits);
          if (planned.fits) expect(planned.leftMicros).toBe(left - price);
        },
      ),
    );
  });

  it('without a budget everything fits; an unknown price leaves what is left alone', () => {
    expect(foreseeSend(null, usd(0.5), usd(0.2))).toEqual({ fits: true, leftMicros: null });
    expect(foreseeSend(usd(1), null, null)).toEqual({ fits: true, leftMicros: usd(1) });
    expect(foreseeSend(0, null, null)).toEqual({ fits: false });
  });
});

describe('budget words', () => {
  it('name the cap as the reservation, the prices seen, and both ways out when lowering the cap helps', () => {
    expect(shortfallWords({ capMicros: usd(0.5), leftMicros: usd(0.3), prices: seen(0.2) })).toBe(
      'reserves its max_cost_usd cap of $0.50 but $0.30 is left of budget_usd (prices seen $0.20): ' +
        'raise budget_usd, or lower max_cost_usd to about $0.20, the prices seen (the cheaper fix)',
    );
    expect(shortfallWords({ capMicros: usd(0.3), leftMicros: usd(0.1), prices: seen(0.08) })).toBe(
      'reserves its max_cost_usd cap of $0.30 but $0.10 is left of budget_usd (prices seen $0.08): ' +
        'raise budget_usd, or lower max_cost_usd to about $0.08, the prices seen (the cheaper fix)',
    );
  });

  it('offer only what is true: the table of ways out', () => {
    const cases: Array<[number | null, number, number[], ReturnType<typeof wayOut>]> = [
      [null, 0.1, [0.2], 'raise_only'],
      [0.5, 0.3, [], 'lower_unknown'],
      [0.2, 0.1, [0.2], 'cap_at_prices'],
      [0.5, 0.1, [0.2], 'lower_too_little'],
      [0.5, 0.3, [0.1, 0.2], 'lower_or_raise'],
    ];
    for (const [cap, left, prices, expected] of cases) {
      const s = { capMicros: cap === null ? null : usd(cap), leftMicros: usd(left), prices: seen(...prices) };
      expect(wayOut(s), JSON.stringify(s)).toBe(expected);
      const words = shortfallWords(s);
      expect(words).toContain('raise budget_usd');
      expect(words.includes('lower max_cost_usd')).toBe(
        expected === 'lower_or_raise' || expected === 'lower_unknown',
      );
    }
  });

  it('say what an item without a cap reserves, and a range of prices', () => {
    expect(shortfallWords({ capMicros: null, leftMicros: usd(0.02), prices: seen(0.04, 0.08) })).toBe(
      'has no max_cost_usd, so it reserves all that is left of budget_usd, $0.02, which is less than it ' +
        'costs (prices seen $0.04-$0.08): raise budget_usd',
    );
    expect(shortfallWords({ capMicros: null, leftMicros: -5, prices: null })).toBe(
      'has nothing left of budget_usd to reserve (no price seen yet): raise budget_usd',
    );
    expect(pricesSeenWords(null)).toBe('no price seen yet');
    expect(pricesSeenOf([])).toBeNull();
  });

  it('count the items and read the first one after its id', () => {
    expect(notFittingLine(1, 'did not fit', 'f', 'reserves x')).toBe(
      '1 item did not fit in budget_usd: f reserves x',
    );
    expect(notFittingLine(9, 'will not fit', 'f', 'reserves x')).toBe(
      '9 items will not fit in budget_usd; the first, f, reserves x',
    );
  });
});
