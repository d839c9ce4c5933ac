import { describe, expect, it } from 'vitest';
import {
  DOCUMENTED_RETRY_AFTER_MS,
  paceFromAnswer,
  type StartInput,
  startStep,
} from '../../src/runner/poll-timing.js';

/** A fresh run's start: jobs of its own POSTs, seen in their answers, pace not known yet. */
const fresh: StartInput = { paceKnown: false, watching: 3, unseen: 0, looked: false };
/** A resumed run's start: three jobs restored from the ledger, none seen since the restart. */
const resumed: StartInput = { ...fresh, unseen: 3 };

describe('startStep: what a run learns before it times its looks', () => {
  it('with nothing followed, asks nothing', () => {
    expect(startStep({ ...fresh, watching: 0 })).toBeNull();
    expect(startStep({ ...resumed, watching: 0 })).toBeNull();
  });

  it('a fresh run asks one of its jobs for Retry-After, once the pace is known nothing', () => {
    expect(startStep(fresh)).toBe('probe');
    expect(startStep({ ...fresh, paceKnown: true })).toBeNull();
  });

  it('a resumed run first looks at the job list: restored jobs may have finished meanwhile', () => {
    expect(startStep(resumed)).toBe('look');
    // --poll-interval names the pace, but the restored jobs are still looked at at once.
    expect(startStep({ ...resumed, paceKnown: true })).toBe('look');
    // One restored job among jobs of this run is enough.
    expect(startStep({ ...resumed, unseen: 1 })).toBe('look');
  });

  it('after that first look, asks a job still unfinished for the pace, and then nothing', () => {
    const looked = { ...resumed, looked: true, unseen: 0 };
    expect(startStep(looked)).toBe('probe');
    expect(startStep({ ...looked, paceKnown: true })).toBeNull();
    // A restored job the look did not settle (its page failed) does not hold up the probe.
    expect(startStep({ ...looked, unseen: 2 })).toBe('probe');
    expect(startStep({ ...looked, unseen: 2, paceKnown: true })).toBeNull();
  });
});

describe('paceFromAnswer: what one job answer says of the pace', () => {
  it('takes the Retry-After an answer names, final job or not', () => {
    expect(paceFromAnswer(false, 1)).toBe(1);
    expect(paceFromAnswer(false, 0.5)).toBe(0.5);
    expect(paceFromAnswer(true, 2)).toBe(2);
  });

  it("reads nothing into a final job's silence: the spec has final jobs omit Retry-After", () => {
    expect(paceFromAnswer(true, null)).toBeNull();
  });

  it('takes an unfinished job without Retry-After at the documented 10 s', () => {
    expect(DOCUMENTED_RETRY_AFTER_MS).toBe(10_000);
    expect(paceFromAnswer(false, null)).toBe(10);
  });
});
