import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { PlainLines } from '../../../src/cli/ui/plain-lines.js';
import { rateAndEta } from '../../../src/cli/ui/progress-text.js';
import type { ProgressSnapshot } from '../../../src/index.js';

/** Plain progress lines for long runs (issue 52, part 4): pace and time left, per-item lines optional. */

function sink() {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).trimEnd().split('\n'));
      done();
    },
  });
  return { out, lines };
}

const snapshot = (done: number): ProgressSnapshot => ({
  total: 1000,
  byState: {
    pending: 1000 - done,
    in_flight: 0,
    done,
    failed: 0,
    budget_exceeded: 0,
    expired: 0,
    checks_failed: 0,
  },
  unfinished: 0,
  slotLimit: 10,
  batchInUse: null,
  downloadsActive: 0,
  downloadsQueued: 0,
  unsavedLimit: 20,
  savingFirst: false,
  spentMicros: 0,
  budgetMicros: null,
  draining: false,
});

describe('plain progress lines', () => {
  it('give the pace since the first line and the time left, at most every five seconds', () => {
    const { out, lines } = sink();
    let ms = Date.parse('2026-01-01T00:00:00Z');
    const view = new PlainLines(out, () => new Date(ms));
    view.handle({ name: 'progress', payload: snapshot(0) });
    ms += 2000;
    view.handle({ name: 'progress', payload: snapshot(40) }); // within five seconds of the last line: none
    ms += 8000;
    view.handle({ name: 'progress', payload: snapshot(100) });
    expect(lines).toEqual([
      '[00:00:00] 0/1000 finished, 0 done, 0/10 slots in use, spent $0.00',
      '[00:00:10] 100/1000 finished, 100 done, 0/10 slots in use, spent $0.00; 10 items/s, ETA 1m30s',
    ]);
  });

  it('leave out the per-item lines when asked, keeping the notices', () => {
    const { out, lines } = sink();
    const view = new PlainLines(out, () => new Date(0), false);
    view.handle({
      name: 'item',
      payload: { itemId: 'a', state: 'done', detail: null, counts: snapshot(1).byState },
    });
    view.handle({ name: 'log', payload: { level: 'warn', message: 'something to know' } });
    expect(lines).toEqual(['[00:00:00] warn: something to know']);
  });

  it('say nothing of pace before an item finished, and "now" when none is left', () => {
    expect(rateAndEta({ atMs: 0, finished: 0 }, { atMs: 5000, finished: 0 }, 10)).toBeNull();
    expect(rateAndEta({ atMs: 0, finished: 0 }, { atMs: 0, finished: 3 }, 10)).toBeNull();
    expect(rateAndEta({ atMs: 0, finished: 0 }, { atMs: 4000, finished: 10 }, 10)).toBe(
      '2.5 items/s, ETA now',
    );
    expect(rateAndEta({ atMs: 0, finished: 0 }, { atMs: 1000, finished: 1 }, 7201)).toBe(
      '1.0 items/s, ETA 2h00m',
    );
  });
});
