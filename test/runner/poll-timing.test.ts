import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  durationModel,
  minimumGapMs,
  nextPollAt,
  type PollTimingInput,
} from '../../src/runner/poll-timing.js';

const S = 1000;
const base: PollTimingInput = {
  now: 0,
  lastPollAt: null,
  fixedIntervalMs: null,
  retryAfterMs: 10 * S,
  running: [{ startedAt: 0 }, { startedAt: 0 }, { startedAt: 0 }],
  durationsMs: [],
};

describe('nextPollAt', () => {
  it('waits for nothing when no job is unfinished', () => {
    expect(nextPollAt({ ...base, running: [] })).toBe(Number.POSITIVE_INFINITY);
  });

  it('follows --poll-interval exactly when one is given', () => {
    expect(nextPollAt({ ...base, fixedIntervalMs: S, lastPollAt: 5 * S, now: 5.2 * S })).toBe(6 * S);
    expect(nextPollAt({ ...base, fixedIntervalMs: S, lastPollAt: 5 * S, now: 7 * S })).toBe(7 * S);
  });

  it('knowing no duration yet, looks at the service cadence: one Retry-After after the last look', () => {
    expect(nextPollAt(base)).toBe(10 * S);
    expect(nextPollAt({ ...base, lastPollAt: 10 * S, now: 10 * S })).toBe(20 * S);
  });

  it('after jobs of about 20 s, waits until a finish is likely instead of looking every 10 s', () => {
    const at = nextPollAt({ ...base, durationsMs: [20 * S, 21 * S, 19 * S] });
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

  it('falls back to the service cadence for a job older than every finished one', () => {
    const at = nextPollAt({
      ...base,
      now: 60 * S,
      lastPollAt: 60 * S,
      durationsMs: [20 * S],
      running: [{ startedAt: 0 }],
    });
    expect(at).toBe(70 * S);
  });

  it('never looks sooner than a per-job poller would send its requests', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 120_000 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 100, max: 60_000 }), { maxLength: 10 }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.integer({ min: 500, max: 20_000 }),
        (starts, durationsMs, lastPollAt, retryAfterMs) => {
          const running = starts.map((startedAt) => ({ startedAt }));
          const now = lastPollAt + 1;
          const at = nextPollAt({ ...base, now, lastPollAt, retryAfterMs, running, durationsMs });
          expect(at).toBeGreaterThanOrEqual(now);
          expect(at).toBeGreaterThanOrEqual(lastPollAt + minimumGapMs(retryAfterMs, running.length));
          expect(Number.isFinite(at)).toBe(true);
        },
      ),
    );
  });
});

describe('durationModel', () => {
  it('has no opinion before any job finished', () => {
    expect(durationModel([])).toBeNull();
  });

  it('is a survival curve: 1 at age 0, falling, 0 past its horizon', () => {
    const model = durationModel([15 * S, 20 * S, 28 * S])!;
    expect(model.survival(0)).toBe(1);
    expect(model.survival(18 * S)).toBeLessThan(model.survival(14 * S));
    expect(model.survival(model.horizonMs)).toBe(0);
  });
});
