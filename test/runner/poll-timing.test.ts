import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationModel } from '../../src/runner/duration-model.js';
import {
  creditAt,
  earliestLookAt,
  lookCredit,
  pollsFor,
  pollsOver,
  windowCap,
} from '../../src/runner/look-limits.js';
import { nextPollAt, type PollTimingInput } from '../../src/runner/poll-timing.js';

const S = 1000;
const base: PollTimingInput = {
  now: 0,
  lastPollAt: null,
  retryAfterMs: 10 * S,
  running: [{ startedAt: 0 }, { startedAt: 0 }, { startedAt: 0 }],
  durationsMs: [],
  queued: 6,
  slots: 3,
  handsOn: true,
  credit: 10,
  recentRequests: [],
  windowCap: windowCap(3),
};
const about20s = [18 * S, 22 * S, 20 * S, 19 * S, 21 * S];

describe('nextPollAt', () => {
  it('waits for nothing when no job is unfinished', () => {
    expect(nextPollAt({ ...base, running: [] })).toBe(Number.POSITIVE_INFINITY);
  });

  it('at the start, looks no sooner than the per-job poller polls: Retry-After after the POSTs', () => {
    // The account read, the new ledger's check, three POSTs and the probe: the window is full and
    // the credit is the six waiting items less the check and the probe.
    const start = { ...base, credit: lookCredit(6, 1, 1), recentRequests: [0, 0, 0, 0, 0, 0] };
    const first = nextPollAt(start);
    expect(first).toBeGreaterThanOrEqual(10 * S);
    expect(first).toBeLessThan(20 * S);
  });

  it('knowing the durations, spends the budget evenly where finishes fall: Retry-After / 3 for 3 jobs', () => {
    const ages = {
      ...base,
      now: 20 * S,
      lastPollAt: 20 * S,
      running: [{ startedAt: 0 }, { startedAt: 4 * S }, { startedAt: 8 * S }],
    };
    expect(nextPollAt({ ...ages, durationsMs: about20s })).toBeCloseTo(20 * S + (10 * S) / 3, -1);
  });

  it('skips the time when no job can have finished, by the durations seen, for at most Retry-After', () => {
    const young = { ...base, now: 2 * S, lastPollAt: 2 * S, durationsMs: about20s };
    // Even spending would look at 5.3 s; the jobs of about 20 s cannot have finished by then.
    expect(nextPollAt(young)).toBe(12 * S);
    // Once a finish may be waiting, the look is not put off.
    const older = { ...young, now: 15 * S, lastPollAt: 15 * S };
    expect(nextPollAt(older)).toBeLessThan(15 * S + (10 * S) / 3 + 1);
  });

  it('with nothing known and nothing waiting for a slot, looks at the service cadence', () => {
    const alone = { ...base, now: 13 * S, lastPollAt: 13 * S, queued: 0 };
    expect(nextPollAt(alone)).toBe(23 * S);
  });

  it('a batch that fits its slots from the start is looked at at the service cadence to its end', () => {
    const fits = {
      ...base,
      now: 16 * S,
      lastPollAt: 16 * S,
      queued: 0,
      handsOn: false,
      running: [{ startedAt: 0 }],
      durationsMs: about20s,
      credit: 6,
    };
    expect(nextPollAt(fits)).toBe(26 * S);
  });

  it('once nothing waits, spends the saved credit on the last job, sooner than an even spread', () => {
    const last = {
      ...base,
      now: 16 * S,
      lastPollAt: 16 * S,
      queued: 0,
      running: [{ startedAt: 0 }],
      durationsMs: about20s,
      credit: 6,
    };
    const at = nextPollAt(last);
    expect(at).toBeLessThan(16 * S + (10 * S) / 3);
    expect(at).toBeGreaterThanOrEqual(17 * S);
  });

  it('scales with Retry-After, which --poll-interval replaces', () => {
    const ages = {
      ...base,
      now: 20 * S,
      lastPollAt: 20 * S,
      running: [{ startedAt: 0 }, { startedAt: 4 * S }, { startedAt: 8 * S }],
    };
    const slow = nextPollAt({ ...ages, durationsMs: about20s });
    const fast = nextPollAt({
      ...ages,
      now: 2 * S,
      lastPollAt: 2 * S,
      retryAfterMs: S,
      running: ages.running.map((job) => ({ startedAt: job.startedAt / 10 })),
      durationsMs: about20s.map((d) => d / 10),
    });
    expect(fast).toBeCloseTo(slow / 10, -2);
  });

  it('never looks beyond the per-job poller: credit for it, room in the window, Retry-After / 10 apart', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 120_000 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 100, max: 60_000 }), { maxLength: 10 }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.integer({ min: 500, max: 20_000 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: -3, max: 5 }),
        fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 12 }),
        (starts, durationsMs, lastPollAt, retryAfterMs, queued, credit, ago) => {
          const running = starts.map((startedAt) => ({ startedAt }));
          const now = lastPollAt + 1;
          const recentRequests = ago
            .map((back) => lastPollAt - back)
            .filter((at) => at > now - retryAfterMs)
            .sort((a, b) => a - b);
          const cap = windowCap(3);
          const input = {
            ...base,
            now,
            lastPollAt,
            retryAfterMs,
            running,
            durationsMs,
            queued,
            credit,
            recentRequests,
            windowCap: cap,
          };
          const at = nextPollAt(input);
          expect(Number.isFinite(at)).toBe(true);
          expect(at).toBeGreaterThanOrEqual(now);
          expect(at).toBeGreaterThanOrEqual(lastPollAt + retryAfterMs / 10);
          // Credit for the look, or a whole Retry-After since the last one (the per-job poller's rate).
          if (at < lastPollAt + retryAfterMs) expect(creditAt(input, at)).toBeGreaterThanOrEqual(1);
          expect(recentRequests.filter((sent) => sent > at - retryAfterMs).length).toBeLessThan(cap);
        },
      ),
    );
  });
});

describe('look limits', () => {
  const limits = { ...base, now: 12 * S, lastPollAt: 10 * S };

  it('counts what a per-job poller polls: one per Retry-After lived, the final one included', () => {
    expect(pollsOver(0, 9_999, 10 * S)).toBe(0);
    expect(pollsOver(0, 10 * S, 10 * S)).toBe(1);
    expect(pollsFor(17 * S, 10 * S)).toBe(2);
    expect(pollsFor(20 * S, 10 * S)).toBe(2);
    expect(pollsFor(50, 10 * S)).toBe(1);
    expect(lookCredit(9, 4, 2)).toBe(3);
  });

  it('without credit, waits until a running job earns a poll, or a whole Retry-After has passed', () => {
    const broke = { ...limits, credit: 0, running: [{ startedAt: 5 * S }, { startedAt: 7 * S }] };
    expect(earliestLookAt(broke, broke.lastPollAt)).toBe(15 * S);
    expect(creditAt(broke, 17 * S)).toBe(2);
    const deep = { ...broke, credit: -5 };
    expect(earliestLookAt(deep, deep.lastPollAt)).toBe(20 * S);
  });

  it('with a full window, waits until its oldest request leaves it, keeping room for two POSTs', () => {
    const full = { ...limits, queued: 0, recentRequests: [3 * S, 4 * S, 5 * S, 6 * S, 8 * S, 10 * S] };
    expect(earliestLookAt(full, full.lastPollAt)).toBe(13 * S);
    expect(earliestLookAt({ ...full, queued: 6 }, full.lastPollAt)).toBe(15 * S);
  });

  it("the window holds no more than a per-job poller's busiest one, nor less than the run's start", () => {
    expect(windowCap(3)).toBe(6);
    expect(windowCap(200)).toBe(400);
    expect(windowCap(1)).toBe(4);
    expect(windowCap(0)).toBe(4);
  });
});

describe('durationModel', () => {
  it('has no opinion before any job finished', () => {
    expect(durationModel([])).toBeNull();
  });

  it('is a survival curve: 1 at age 0, falling, nearly 0 past the longest job but never quite', () => {
    const model = durationModel([15 * S, 20 * S, 28 * S])!;
    expect(model.survival(0)).toBe(1);
    expect(model.survival(18 * S)).toBeLessThan(model.survival(14 * S));
    expect(model.survival(45 * S)).toBeGreaterThan(0);
    expect(model.survival(45 * S)).toBeLessThan(0.001);
  });

  it('is wide after one job and narrows as more jobs agree', () => {
    const one = durationModel([20 * S])!;
    const many = durationModel(Array.from({ length: 20 }, (_, i) => 19.5 * S + 50 * i))!;
    expect(one.survival(16 * S)).toBeLessThan(0.9);
    expect(many.survival(16 * S)).toBeGreaterThan(0.99);
  });
});
