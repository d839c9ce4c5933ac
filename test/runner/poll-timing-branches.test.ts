import { describe, expect, it } from 'vitest';
import { windowCap } from '../../src/runner/look-limits.js';
import { nextPollAt, type PollTimingInput } from '../../src/runner/poll-timing.js';

/**
 * Each branch of the look timing on one input whose answer is pinned: where the rule is plain
 * arithmetic the value is worked out in the comment; where it rests on the duration model, the
 * comment says what the value shows and the pinned figure keeps the model's reading from drifting.
 * Retry-After is 10 s throughout; nothing is in the request window and the credit is ample unless
 * said otherwise, so only the timing rule decides.
 */
const S = 1000;
const base: PollTimingInput = {
  now: 0,
  lastPollAt: null,
  retryAfterMs: 10 * S,
  running: [{ startedAt: 0 }],
  durationsMs: [],
  queued: 6,
  slots: 3,
  handsOn: true,
  credit: 10,
  recentRequests: [],
  windowCap: windowCap(3),
};
const startedAt0 = (count: number) => Array.from({ length: count }, () => ({ startedAt: 0 }));
const look = (input: Partial<PollTimingInput>) => nextPollAt({ ...base, ...input });

describe('nextPollAt, branch by branch', () => {
  it('has nothing to look at once no job runs, even after earlier looks', () => {
    expect(look({ running: [], now: 5 * S, lastPollAt: 5 * S })).toBe(Number.POSITIVE_INFINITY);
  });

  it('before the first look, counts Retry-After from the oldest running job', () => {
    // Jobs from 0 s and 9 s, nothing learnt: the per-job poller would ask after the first at 10 s.
    const starts = [{ startedAt: 0 }, { startedAt: 9 * S }];
    expect(look({ running: starts, now: 9 * S })).toBe(10 * S);
    expect(look({ running: starts, now: 9 * S, durationsMs: [12 * S, 13 * S, 11 * S] })).toBe(10 * S);
  });

  it('with nothing waiting and no look yet, still waits Retry-After from the start', () => {
    // The service cadence applies between looks; the first one is Retry-After after the start.
    expect(look({ queued: 0, running: [{ startedAt: 5 * S }], now: 5 * S })).toBe(15 * S);
  });

  describe('once nothing waits and the jobs are long (two Retry-After or more)', () => {
    const draining = { queued: 0, now: 10 * S, lastPollAt: 10 * S };

    it('looks about once per finish expected: the typical duration over the jobs running', () => {
      // 30 s / 4 jobs = 7.5 s after the last look.
      expect(look({ ...draining, running: startedAt0(4), durationsMs: [30 * S, 30 * S, 30 * S] })).toBe(
        17.5 * S,
      );
      // Exactly two Retry-After counts as long: 20 s / 4 = 5 s.
      expect(look({ ...draining, running: startedAt0(4), durationsMs: [20 * S, 20 * S, 20 * S] })).toBe(
        15 * S,
      );
    });

    it('at most once per Retry-After, also with just two jobs left', () => {
      // 50 s / 2 = 25 s, capped at Retry-After.
      expect(look({ ...draining, running: startedAt0(2), durationsMs: [50 * S, 50 * S, 50 * S] })).toBe(
        20 * S,
      );
      // Two jobs of 20 s at 16 s: 20 s / 2 = 10 s, although both may end any moment.
      const nearEnd = { ...draining, now: 16 * S, lastPollAt: 16 * S };
      expect(look({ ...nearEnd, running: startedAt0(2), durationsMs: [20 * S, 20 * S, 20 * S] })).toBe(
        26 * S,
      );
    });
  });

  it('once nothing waits and the jobs are short, spends the credit on them instead of the cadence', () => {
    // 10 s jobs at 5 s: the cadence would say 15 s; the credit is spent on the time they may take.
    const short = { queued: 0, running: startedAt0(3), now: 5 * S, lastPollAt: 5 * S };
    expect(look({ ...short, durationsMs: [10 * S, 10 * S, 10 * S] })).toBe(8_400);
  });

  describe('the last job: the saved credit spread until it has finished with 95% chance', () => {
    // One job of about 20 s, running since 0 s, last looked at at 16 s: by the model it has
    // finished with 95% chance at 24 s, 8 s after the last look.
    const last = {
      queued: 0,
      slots: 1,
      now: 16 * S,
      lastPollAt: 16 * S,
      durationsMs: [18 * S, 22 * S, 20 * S, 19 * S, 21 * S],
    };

    it('one look left: at that horizon', () => {
      expect(look({ ...last, credit: 1 })).toBe(24 * S);
    });

    it('two looks left: half way there', () => {
      expect(look({ ...last, credit: 2 })).toBe(20 * S);
    });

    it('the horizon counts from when the job started: the same job started 4 s later, 4 s later', () => {
      const later = { ...last, running: [{ startedAt: 4 * S }], now: 20 * S, lastPollAt: 20 * S };
      expect(look({ ...later, credit: 1 })).toBe(28 * S);
    });

    it('when the model sees no end within 50 Retry-After, spreads the credit over one Retry-After', () => {
      // 60 jobs of 5 s and 4 of 3000 s: one in sixteen jobs is long, so the job running at 80 s
      // has not finished with 95% chance in the next 500 s. One look in credit: 80 s + 10 s.
      const heavyTail = [
        ...Array.from({ length: 60 }, () => 5 * S),
        ...Array.from({ length: 4 }, () => 3000 * S),
      ];
      expect(look({ ...last, now: 80 * S, lastPollAt: 80 * S, durationsMs: heavyTail, credit: 1 })).toBe(
        90 * S,
      );
    });

    it('six looks left: the first after 8 s / 6, moved on to where a finish is likely enough', () => {
      // 17.33 s, then one search step (Retry-After / 100) on.
      expect(look({ ...last, credit: 6 })).toBeCloseTo(17_433.333, 2);
    });

    it('however much credit, looks stay Retry-After / 10 apart, also before the first look', () => {
      // Jobs of about half a second, the first look not yet made: 1000 looks in credit would
      // space them 1 ms apart; they go out 1 s apart instead.
      const quick = { ...last, now: 100, lastPollAt: null, durationsMs: [500, 600, 550], credit: 1000 };
      expect(look(quick)).toBe(1 * S);
    });
  });

  describe('the chance that a job finished since the last look', () => {
    it('is the chance of finishing given it was still running then, not since its start', () => {
      // Durations 10 to 70 s: a job running at 12 s has outlived the short ones, so its chance
      // of finishing in the next seconds is lower than a fresh job's would be; the look waits.
      const spread = [10 * S, 30 * S, 50 * S, 70 * S];
      expect(look({ now: 12 * S, lastPollAt: 12 * S, durationsMs: spread })).toBeCloseTo(20_033.333, 2);
      const two = [{ startedAt: 0 }, { startedAt: 2 * S }];
      expect(look({ running: two, now: 14 * S, lastPollAt: 14 * S, durationsMs: spread })).toBeCloseTo(
        18_133.333,
        2,
      );
    });

    it('is certain for a job far past every duration seen: looked at as soon as the even spread allows', () => {
      // Jobs of 1 s, one still running after 1000 s: 1000 s + 10 s / 3 slots.
      expect(look({ now: 1000 * S, lastPollAt: 1000 * S, durationsMs: [1 * S, 1 * S] })).toBeCloseTo(
        1_003_333.333,
        2,
      );
    });
  });
});
