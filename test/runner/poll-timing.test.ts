import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationModel } from '../../src/runner/duration-model.js';
import { earliestLookAt, minimumGapMs } from '../../src/runner/look-limits.js';
import { nextPollAt, type PollTimingInput } from '../../src/runner/poll-timing.js';

const S = 1000;
const base: PollTimingInput = {
  now: 0,
  lastPollAt: null,
  retryAfterMs: 10 * S,
  running: [{ startedAt: 0 }, { startedAt: 0 }, { startedAt: 0 }],
  durationsMs: [],
  queued: 6,
  recentLooks: [],
};
const about20s = [18 * S, 22 * S, 20 * S, 19 * S, 21 * S];

describe('nextPollAt', () => {
  it('waits for nothing when no job is unfinished', () => {
    expect(nextPollAt({ ...base, running: [] })).toBe(Number.POSITIVE_INFINITY);
  });

  it('knowing no duration yet, looks first after a guess from Retry-After, then at its cadence', () => {
    const first = nextPollAt(base);
    expect(first).toBeGreaterThan(10 * S);
    expect(first).toBeLessThan(20 * S);
    expect(nextPollAt({ ...base, lastPollAt: first, now: first })).toBe(first + 10 * S);
  });

  it('knowing no duration yet, looks sooner at many jobs than at few', () => {
    const many = Array.from({ length: 200 }, () => ({ startedAt: 0 }));
    const first = nextPollAt({ ...base, retryAfterMs: S, running: many, queued: 800 });
    expect(first).toBeGreaterThanOrEqual(S);
    expect(first).toBeLessThan(1.2 * S);
  });

  it('scales with Retry-After, which --poll-interval replaces', () => {
    const fast = nextPollAt({ ...base, retryAfterMs: S, durationsMs: about20s.map((d) => d / 10) });
    const slow = nextPollAt({ ...base, durationsMs: about20s });
    expect(fast).toBeCloseTo(slow / 10, -2);
  });

  it('after jobs of about 20 s, waits until a finish is likely instead of looking every 10 s', () => {
    const at = nextPollAt({ ...base, durationsMs: about20s });
    expect(at).toBeGreaterThan(15 * S);
    expect(at).toBeLessThan(21 * S);
  });

  it('looks sooner when more jobs may finish, later when they started later', () => {
    const durationsMs = [18 * S, 22 * S, 26 * S];
    const one = nextPollAt({ ...base, durationsMs, running: [{ startedAt: 0 }] });
    const three = nextPollAt({ ...base, durationsMs });
    const later = nextPollAt({ ...base, durationsMs, running: [{ startedAt: 5 * S }] });
    expect(three).toBeLessThan(one);
    expect(later).toBeGreaterThan(one);
  });

  it('with nothing left to submit, waits until the last of the jobs has likely finished', () => {
    const waiting = nextPollAt({ ...base, durationsMs: about20s });
    const last = nextPollAt({ ...base, durationsMs: about20s, queued: 0 });
    expect(last).toBeGreaterThan(waiting);
    expect(last).toBeGreaterThan(20 * S);
    expect(last).toBeLessThan(26 * S);
  });

  it('keeps looking, at most at the service cadence, for a job older than every finished one', () => {
    const straggler = {
      ...base,
      now: 60 * S,
      lastPollAt: 60 * S,
      durationsMs: [20 * S],
      running: [{ startedAt: 0 }],
    };
    expect(nextPollAt(straggler)).toBe(70 * S);
  });

  it('never looks sooner than a per-job poller would send its requests', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 120_000 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 100, max: 60_000 }), { maxLength: 10 }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.integer({ min: 500, max: 20_000 }),
        fc.integer({ min: 0, max: 5 }),
        fc.array(
          fc.record({ ago: fc.integer({ min: 0, max: 20_000 }), finished: fc.integer({ min: 0, max: 3 }) }),
        ),
        (starts, durationsMs, lastPollAt, retryAfterMs, queued, earlier) => {
          const running = starts.map((startedAt) => ({ startedAt }));
          const now = lastPollAt + 1;
          const recentLooks = [
            ...earlier.map((look) => ({ at: lastPollAt - look.ago, finished: look.finished })),
            { at: lastPollAt, finished: 0 },
          ]
            .filter((look) => look.at > now - retryAfterMs)
            .sort((a, b) => a.at - b.at);
          const input = { ...base, now, lastPollAt, retryAfterMs, running, durationsMs, queued, recentLooks };
          const at = nextPollAt(input);
          expect(Number.isFinite(at)).toBe(true);
          expect(at).toBeGreaterThanOrEqual(now);
          if (queued > 0) {
            expect(at).toBeGreaterThanOrEqual(lastPollAt + minimumGapMs(retryAfterMs, running.length));
            return;
          }
          // In the Retry-After before the look, no more looks than jobs followed in it (at most 10).
          const inWindow = recentLooks.filter((look) => look.at > at - retryAfterMs);
          const followed = running.length + inWindow.reduce((sum, look) => sum + look.finished, 0);
          expect(inWindow.length + 1).toBeLessThanOrEqual(Math.min(followed, 10));
        },
      ),
      // Found by CI: the look that found two jobs finished leaves the window before the chosen time.
      { examples: [[[0], [100], 0, 500, 0, [{ ago: 350, finished: 2 }]]] },
    );
  });
});

describe('earliestLookAt', () => {
  const limits = {
    now: 12 * S,
    lastPollAt: 10 * S,
    retryAfterMs: 10 * S,
    following: 2,
    oldestStart: 0,
    queued: 1,
    recentLooks: [{ at: 10 * S, finished: 1 }],
  };

  it('while items wait, keeps Retry-After / n between looks', () => {
    expect(earliestLookAt(limits)).toBe(15 * S);
  });

  it('with nothing left to submit, lets the looks of jobs that finished go to the ones left', () => {
    const looks = [
      { at: 4 * S, finished: 1 },
      { at: 10 * S, finished: 1 },
    ];
    // Two followed now and two finished in the window: a third and fourth look fit at once.
    expect(earliestLookAt({ ...limits, queued: 0, recentLooks: looks })).toBe(12 * S);
    // One followed and none finished in the window: the window must first empty.
    const quiet = [{ at: 10 * S, finished: 0 }];
    expect(earliestLookAt({ ...limits, queued: 0, following: 1, recentLooks: quiet })).toBe(20 * S);
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
