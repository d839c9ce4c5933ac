import { describe, expect, it } from 'vitest';
import { durationModel, priorModel } from '../../src/runner/duration-model.js';
import { earliestLookAt, type LookLimitInput, minimumGapMs } from '../../src/runner/look-limits.js';

/**
 * The exact values of the look-timing rules, worked out by hand, so that a change to any constant
 * or comparison shows (the behaviour tests are in poll-timing.test.ts).
 */
const S = 1000;
/** What every curve keeps for a job that outlives all those seen: 0.1%. */
const TAIL = 0.001;
const curve = (kernel: number, tail = 1) => (1 - TAIL) * kernel + TAIL * tail;

describe('minimumGapMs', () => {
  it('is Retry-After per job followed, for one to ten jobs', () => {
    expect(minimumGapMs(10 * S, 0)).toBe(10 * S);
    expect(minimumGapMs(10 * S, 1)).toBe(10 * S);
    expect(minimumGapMs(10 * S, 4)).toBe(2.5 * S);
    expect(minimumGapMs(10 * S, 10)).toBe(1 * S);
    expect(minimumGapMs(10 * S, 50)).toBe(1 * S);
  });
});

describe('earliestLookAt', () => {
  const waiting: LookLimitInput = {
    now: 0,
    lastPollAt: null,
    retryAfterMs: 10 * S,
    following: 2,
    oldestStart: 5 * S,
    queued: 3,
    recentLooks: [],
  };

  it('while items wait, counts the gap from the last look, or from the oldest job before any', () => {
    expect(earliestLookAt(waiting)).toBe(10 * S);
    expect(earliestLookAt({ ...waiting, lastPollAt: 8 * S })).toBe(13 * S);
    expect(earliestLookAt({ ...waiting, lastPollAt: 8 * S, now: 20 * S })).toBe(20 * S);
  });

  const done: LookLimitInput = { ...waiting, queued: 0, now: 20 * S, following: 1 };

  it('with nothing to submit, looks at once while the last Retry-After has room', () => {
    expect(earliestLookAt({ ...done, recentLooks: [] })).toBe(20 * S);
    // A look exactly one Retry-After ago has left the window.
    expect(earliestLookAt({ ...done, recentLooks: [{ at: 10 * S, finished: 0 }] })).toBe(20 * S);
    // Two jobs followed: two looks per window.
    const oneLook = [{ at: 15 * S, finished: 0 }];
    expect(earliestLookAt({ ...done, following: 2, recentLooks: oneLook })).toBe(20 * S);
  });

  it('otherwise waits until enough looks have left the window', () => {
    const looks = [
      { at: 12 * S, finished: 0 },
      { at: 15 * S, finished: 0 },
      { at: 18 * S, finished: 0 },
    ];
    expect(earliestLookAt({ ...done, recentLooks: looks })).toBe(28 * S);
    expect(earliestLookAt({ ...done, following: 2, recentLooks: looks })).toBe(25 * S);
    // With no job followed it still may look once per window.
    expect(earliestLookAt({ ...done, following: 0, recentLooks: looks })).toBe(28 * S);
  });

  it('gives the looks of the jobs that finished in the window to the ones left', () => {
    const looks = [
      { at: 12 * S, finished: 1 },
      { at: 15 * S, finished: 0 },
    ];
    // One followed plus one finished: two looks per window, both spent. At 22 s the look that saw
    // the finish leaves the window, and its credit with it: one look per window, until 25 s.
    expect(earliestLookAt({ ...done, recentLooks: looks })).toBe(25 * S);
    expect(earliestLookAt({ ...done, recentLooks: [{ at: 15 * S, finished: 1 }] })).toBe(20 * S);
  });

  it('never looks more than ten times per Retry-After, however many jobs', () => {
    const looks = Array.from({ length: 10 }, (_, i) => ({ at: 11 * S + i * 100, finished: 0 }));
    expect(earliestLookAt({ ...done, following: 50, recentLooks: looks })).toBe(21 * S);
    expect(earliestLookAt({ ...done, following: 50, recentLooks: looks.slice(1) })).toBe(20 * S);
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
