import { describe, expect, it } from 'vitest';
import { durationModel, priorModel } from '../../src/runner/duration-model.js';
import {
  creditAt,
  earliestLookAt,
  type LookLimitInput,
  lookCredit,
  pollsFor,
  pollsOver,
  windowCap,
} from '../../src/runner/look-limits.js';

/**
 * The exact values of the look-timing rules, worked out by hand, so that a change to any constant
 * or comparison shows (the behaviour tests are in poll-timing.test.ts).
 */
const S = 1000;
/** What every curve keeps for a job that outlives all those seen: 0.1%. */
const TAIL = 0.001;
const curve = (kernel: number, tail = 1) => (1 - TAIL) * kernel + TAIL * tail;

describe('the per-job poller budget', () => {
  it('counts one poll per Retry-After of a job, the final one included, at least one', () => {
    expect(pollsFor(0, 10 * S)).toBe(1);
    expect(pollsFor(10 * S, 10 * S)).toBe(1);
    expect(pollsFor(10 * S + 1, 10 * S)).toBe(2);
    expect(pollsFor(25 * S, 10 * S)).toBe(3);
    // A Retry-After of zero is read as one millisecond, never a division by zero.
    expect(pollsFor(5, 0)).toBe(5);
  });

  it('counts the polls sent so far from the first, one Retry-After after the start', () => {
    expect(pollsOver(0, 9999, 10 * S)).toBe(0);
    expect(pollsOver(0, 10 * S, 10 * S)).toBe(1);
    expect(pollsOver(5 * S, 34 * S, 10 * S)).toBe(2);
    expect(pollsOver(5 * S, 0, 10 * S)).toBe(0);
  });

  it('is what the poller earned less the looks and the extra requests', () => {
    expect(lookCredit(10, 3, 2)).toBe(5);
    expect(lookCredit(1, 3, 0)).toBe(-2);
  });

  it("caps a window at the per-job poller's busiest one, never below the run's start", () => {
    expect(windowCap(0)).toBe(4);
    expect(windowCap(1)).toBe(4);
    expect(windowCap(3)).toBe(6);
    expect(windowCap(4)).toBe(8);
    expect(windowCap(200)).toBe(400);
  });
});

describe('earliestLookAt', () => {
  const base: LookLimitInput = {
    now: 20 * S,
    lastPollAt: 18 * S,
    retryAfterMs: 10 * S,
    running: [{ startedAt: 0 }, { startedAt: 5 * S }],
    credit: 1,
    queued: 0,
    recentRequests: [],
    windowCap: 6,
  };

  it('adds the polls the running jobs earn between now and then to the credit', () => {
    expect(creditAt(base, 20 * S)).toBe(1);
    // The second job earns its second poll at 25 s, the first its third at 30 s.
    expect(creditAt(base, 25 * S - 1)).toBe(1);
    expect(creditAt(base, 25 * S)).toBe(2);
    expect(creditAt(base, 30 * S)).toBe(3);
  });

  it('looks at once with credit and room, but never sooner than a tenth of Retry-After after the last', () => {
    expect(earliestLookAt(base, base.lastPollAt)).toBe(20 * S);
    expect(earliestLookAt({ ...base, lastPollAt: 19.5 * S }, 19.5 * S)).toBe(20.5 * S);
    expect(earliestLookAt(base, null, 24 * S)).toBe(24 * S);
  });

  it('without credit waits for the next poll the jobs earn, or one Retry-After after the last look', () => {
    const broke = { ...base, credit: 0 };
    expect(earliestLookAt(broke, 18 * S)).toBe(25 * S);
    expect(earliestLookAt({ ...broke, running: [{ startedAt: 0 }] }, 18 * S)).toBe(28 * S);
    expect(earliestLookAt({ ...broke, credit: -3, running: [{ startedAt: 0 }] }, 18 * S)).toBe(28 * S);
    // Before any look the Retry-After is counted from the oldest job's start.
    expect(earliestLookAt({ ...broke, credit: -3, running: [{ startedAt: 12 * S }] }, null)).toBe(22 * S);
  });

  it('before any look, looks from now, and counts Retry-After from the oldest of several jobs', () => {
    const first = { ...base, now: 0, lastPollAt: null, running: [{ startedAt: 0 }] };
    expect(earliestLookAt(first, null)).toBe(0);
    const broke = {
      ...base,
      credit: -3,
      lastPollAt: null,
      running: [{ startedAt: 15 * S }, { startedAt: 12 * S }],
    };
    expect(earliestLookAt(broke, null)).toBe(22 * S);
  });

  it('once a Retry-After has passed since the last look, looks whatever the credit', () => {
    expect(earliestLookAt({ ...base, credit: 0, lastPollAt: 5 * S }, 5 * S)).toBe(20 * S);
    expect(earliestLookAt({ ...base, credit: -4, lastPollAt: 10 * S }, 10 * S)).toBe(20 * S);
  });

  it('waits until enough requests have left the window, keeping room for the POSTs a look sets off', () => {
    const sent = [11 * S, 12 * S, 13 * S, 14 * S, 15 * S, 16 * S];
    expect(earliestLookAt({ ...base, recentRequests: sent }, 18 * S)).toBe(21 * S);
    expect(earliestLookAt({ ...base, recentRequests: sent.slice(1) }, 18 * S)).toBe(20 * S);
    // Two items waiting and two jobs running: two places kept, so four requests fill the window.
    const posts = { ...base, queued: 2, recentRequests: sent.slice(2) };
    expect(earliestLookAt(posts, 18 * S)).toBe(23 * S);
    expect(earliestLookAt({ ...posts, queued: 1 }, 18 * S)).toBe(20 * S);
    expect(earliestLookAt({ ...posts, windowCap: 1 }, 18 * S)).toBe(26 * S);
  });
});

describe('durationModel', () => {
  it('after one job of 20 s, spreads it over 20 s ± 6 s (0.3 of the mean)', () => {
    const model = durationModel([20 * S])!;
    expect(model.survival(14 * S)).toBe(1);
    expect(model.survival(17 * S)).toBeCloseTo(curve(0.75), 12);
    expect(model.survival(20 * S)).toBeCloseTo(curve(0.5), 12);
    expect(model.survival(26 * S)).toBeCloseTo(curve(0), 12);
    // Past the longest, the tail falls by e every width.
    expect(model.survival(32 * S)).toBeCloseTo(curve(0, Math.exp(-1)), 15);
  });

  it('after jobs of 10 s and 30 s, is as wide as their spread allows (2/3 of it)', () => {
    const model = durationModel([10 * S, 30 * S])!;
    const width = (40 * S) / 3;
    const exact = (age: number) => {
      const share = (value: number) => Math.min(1, Math.max(0, (age - value + width) / (2 * width)));
      const end = 30 * S + width;
      return curve(1 - (share(10 * S) + share(30 * S)) / 2, age <= end ? 1 : Math.exp(-(age - end) / width));
    };
    expect(model.survival(0)).toBeCloseTo(curve(0.9375), 12);
    expect(model.survival(20 * S)).toBeCloseTo(curve(0.5), 12);
    expect(model.survival(30 * S)).toBeCloseTo(curve(0.25), 12);
    expect(model.survival(50 * S)).toBeCloseTo(curve(0, Math.exp(-0.5)), 15);
    // The curve is tabulated: everywhere within a thousandth of the exact one.
    for (let age = -5 * S; age <= 60 * S; age += 100)
      expect(Math.abs(model.survival(age) - exact(age))).toBeLessThan(1e-3);
  });

  it('is at least 1 ms wide, and counts a job of 0 ms', () => {
    const model = durationModel([0])!;
    expect(model.survival(-1)).toBe(1);
    expect(model.survival(0)).toBeCloseTo(curve(0.5), 12);
    expect(model.survival(0.5)).toBeCloseTo(curve(0.25), 12);
    expect(model.survival(2)).toBeCloseTo(curve(0, Math.exp(-1)), 15);
  });

  it('ignores negative durations, and has no opinion with none left', () => {
    expect(durationModel([-5])).toBeNull();
    expect(durationModel([-5, 20 * S])!.survival(17 * S)).toBeCloseTo(curve(0.75), 12);
  });

  it('keeps only the newest 64 durations', () => {
    const recent = Array.from({ length: 64 }, () => 20 * S);
    const model = durationModel([500 * S, ...recent])!;
    expect(model.survival(26 * S)).toBeCloseTo(durationModel(recent)!.survival(26 * S), 12);
    expect(model.survival(26 * S)).toBeLessThan(0.01);
  });

  it('is built once per list, and again when the list has grown', () => {
    const durations = [20 * S];
    const first = durationModel(durations);
    expect(durationModel(durations)).toBe(first);
    durations.push(40 * S);
    const grown = durationModel(durations)!;
    expect(grown).not.toBe(first);
    expect(grown.survival(30 * S)).toBeGreaterThan(0.4);
  });
});

describe('priorModel', () => {
  it('spreads jobs evenly on a log scale from one to four Retry-After', () => {
    const model = priorModel(10 * S);
    expect(model.survival(10 * S)).toBe(1);
    expect(model.survival(20 * S)).toBeCloseTo(curve(0.5), 12);
    expect(model.survival(40 * S)).toBeCloseTo(curve(0), 12);
    expect(model.survival(50 * S)).toBeCloseTo(curve(0, Math.exp(-1)), 15);
  });

  it('takes at least 1 ms for a Retry-After of 0', () => {
    const model = priorModel(0);
    expect(model.survival(1)).toBe(1);
    expect(model.survival(2)).toBeCloseTo(curve(0.5), 12);
    expect(model.survival(4)).toBeCloseTo(curve(0), 12);
  });
});
