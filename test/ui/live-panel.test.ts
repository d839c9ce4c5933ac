import { describe, expect, it } from 'vitest';
import type { ProgressSnapshot } from '../../src/runner/reporter.js';
import { type LiveEvent, pushEvent, RECENT_EVENTS, renderFrame } from '../../src/ui/live-panel.js';

const snapshot: ProgressSnapshot = {
  total: 40,
  byState: { pending: 25, in_flight: 3, done: 10, failed: 1, budget_exceeded: 1, expired: 0 },
  unfinished: 3,
  slotLimit: 3,
  downloadsActive: 2,
  downloadsQueued: 1,
  spentMicros: 1_200_000,
  budgetMicros: 10_000_000,
  draining: false,
};

describe('the live panel (pure)', () => {
  it('shows items by state, slots, downloads, spend against budget and an ETA', () => {
    const state = { title: 'spring (40 items)', startedAtMs: 0, snapshot, events: [] };
    expect(renderFrame(state, 60_000, 200)).toEqual([
      'spring (40 items)  ███████░░░░░░░░░░░░░░░░░  12/40 finished  ETA 2m20s',
      '  done 10   failed 1   over budget 1   expired 0   in flight 3   pending 25',
      '  slots 3/3 in use   downloads 2 active, 1 queued   spent $1.20 of $10.00 (12%)',
      'recent: nothing yet',
    ]);
  });

  it('cuts every line to the terminal width, so nothing wraps', () => {
    const events: LiveEvent[] = [{ at: '12:00:00', text: `x: failed (${'very long message '.repeat(10)})` }];
    const frame = renderFrame({ title: 't', startedAtMs: 0, snapshot, events }, 0, 40);
    for (const line of frame) expect(line.length).toBeLessThanOrEqual(39);
    expect(frame.at(-1)).toMatch(/…$/);
  });

  it('never draws more lines than the terminal has rows', () => {
    const events = Array.from({ length: 8 }, (_, i) => ({ at: '12:00:00', text: `event ${i + 1}` }));
    const frame = renderFrame({ title: 't', startedAtMs: 0, snapshot, events }, 0, 120, 8);
    // Seven lines and the cursor's row below them: the whole frame fits on an 8-row screen.
    expect(frame).toHaveLength(7);
    expect(frame.slice(-4)).toEqual([
      'recent:',
      '  12:00:00  event 6',
      '  12:00:00  event 7',
      '  12:00:00  event 8',
    ]);
  });

  it('keeps the latest events only, each once', () => {
    const events: LiveEvent[] = [];
    for (let i = 1; i <= 12; i++) pushEvent(events, { at: '12:00:00', text: `event ${i}` });
    expect(events.map((event) => event.text)).toEqual(
      Array.from({ length: RECENT_EVENTS }, (_, i) => `event ${i + 13 - RECENT_EVENTS}`),
    );
  });
});
