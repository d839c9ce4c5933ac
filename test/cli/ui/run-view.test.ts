import { describe, expect, it } from 'vitest';
import { checkTitle, FAILED_SHOWN, RECENT_EVENTS, RunViewState } from '../../../src/cli/ui/run-view.js';
import { type ItemState, zeroCounts } from '../../../src/ledger/records.js';
import type { ProgressSnapshot } from '../../../src/runner/run-observer.js';

const counts = (over: Partial<Record<ItemState, number>>): Record<ItemState, number> => ({
  ...zeroCounts(),
  ...over,
});

const snapshot: ProgressSnapshot = {
  total: 40,
  byState: counts({ pending: 25, in_flight: 3, done: 10, failed: 1, budget_exceeded: 1 }),
  unfinished: 3,
  slotLimit: 3,
  batchInUse: null,
  downloadsActive: 2,
  downloadsQueued: 1,
  spentMicros: 1_200_000,
  budgetMicros: 10_000_000,
  draining: false,
};

describe("run's terminal view, as words (pure)", () => {
  it('titles the generate phase with progress, ETA, the counts, slots and spend against budget', () => {
    const view = new RunViewState('spring (40 items)', 0);
    view.progress(snapshot);
    expect(view.generateTitle(60_000)).toBe(
      [
        'Generate spring (40 items): 12/40 finished, ETA 2m20s',
        'done 10 · failed 1 · over budget 1 · expired 0 · in flight 3 · pending 25',
        'slots 3/3 in use · spent $1.20 of $10.00 (12%)',
      ].join('\n'),
    );
    expect(view.saveTitle()).toBe('Save files: 10 items saved, 2 downloading, 1 queued');
    // A batch several runners share: the counts are this runner's, the slots and spend the batch's.
    view.progress({ ...snapshot, slotLimit: 10, batchInUse: 7 });
    const [counted, , spent] = view.generateTitle(60_000).split('\n');
    expect(counted).toBe('Generate spring (40 items), this runner: 12/40 finished, ETA 2m20s');
    expect(spent).toBe(
      "slots 7/10 in use by the batch's runners, 3 by this one · spent $1.20 of $10.00 (12%) by the batch's runners",
    );
    view.progress({ ...snapshot, draining: true });
    expect(view.generateTitle(60_000).split('\n').at(-1)).toBe(
      'stopping: no new submissions; jobs in flight are finished and saved (Ctrl-C again quits now)',
    );
    view.end();
    expect(view.generateTitle(75_000).split('\n')[0]).toBe(
      'Generated spring (40 items): 12/40 finished, took 1m15s',
    );
    expect(view.saveTitle()).toBe('Saved the files of 10 items');
  });

  it('takes the counts from the same change as the event, never from an older snapshot', () => {
    const view = new RunViewState('t', 0);
    view.progress({ ...snapshot, byState: counts({ in_flight: 1, pending: 39 }) });
    view.itemChanged('forest-fog', 'done', null, counts({ done: 1, pending: 39 }), 5_000);
    expect(view.generateTitle(5_000)).toContain(
      'done 1 · failed 0 · over budget 0 · expired 0 · in flight 0',
    );
    expect(view.events.map((event) => event.text)).toEqual(['forest-fog: done']);
  });

  it('keeps the latest events only, each once, and leaves out what is not worth a line', () => {
    const view = new RunViewState('t', 0);
    for (let i = 1; i <= 12; i++) view.log('info', `event ${i}`, 0);
    view.log('info', 'polled: 3 job(s) unfinished', 0);
    view.itemChanged('x', 'pending', null, counts({ pending: 1 }), 0);
    expect(view.events.map((event) => event.text)).toEqual(
      Array.from({ length: RECENT_EVENTS }, (_, i) => `event ${i + 13 - RECENT_EVENTS}`),
    );
  });

  it('shows a bounded number of jobs in flight, oldest first, and counts the rest', () => {
    const view = new RunViewState('t', 0);
    for (let i = 0; i < 200; i++) view.itemChanged(`item-${i}`, 'in_flight', null, counts({}), i * 1000);
    view.itemChanged('item-1', 'done', null, counts({}), 200_000);
    expect(view.laneTitles(5, 200_000)).toEqual([
      'item-0: in flight 3m20s',
      'item-2: in flight 3m18s',
      'item-3: in flight 3m17s',
      'item-4: in flight 3m16s',
      '… and 195 more in flight',
    ]);
    const few = new RunViewState('t', 0);
    few.itemChanged('a', 'in_flight', null, counts({}), 0);
    expect(few.laneTitles(5, 4_000)).toEqual(['a: in flight 4s']);
  });

  it('ends with the failed items (a few), the budget stop and the reason the run stopped', () => {
    const view = new RunViewState('t', 0);
    for (let i = 1; i <= FAILED_SHOWN + 2; i++)
      view.itemChanged(`bad-${i}`, 'failed', 'content_rejected: no', counts({ failed: i }), 0);
    view.itemChanged('late', 'budget_exceeded', null, counts({ failed: 7, budget_exceeded: 2 }), 0);
    expect(
      view.outcome({ kind: 'stop_loss', signature: 'content_rejected', items: ['a', 'b', 'c'] }),
    ).toEqual([
      ...Array.from({ length: FAILED_SHOWN }, (_, i) => ({
        state: 'failed',
        text: `bad-${i + 1}: failed (content_rejected: no)`,
      })),
      { state: 'failed', text: '… and 2 more failed (mediabatch status)' },
      { state: 'failed', text: 'stopped by the budget: 2 items did not fit in budget_usd' },
      { state: 'failed', text: 'stopped: 3 items in a row failed with content_rejected' },
    ]);
    expect(new RunViewState('t', 0).outcome({ kind: 'draining' })).toEqual([
      {
        state: 'skipped',
        text: 'stopped by Ctrl-C: nothing new was submitted; jobs in flight were finished and saved',
      },
    ]);
    expect(new RunViewState('t', 0).outcome(null)).toEqual([]);
  });

  it("names the first item the budget kept back, in the run's own words for it", () => {
    const view = new RunViewState('t', 0);
    const words =
      'reserves its max_cost_usd cap of $0.50 but $0.30 is left of budget_usd (prices seen $0.20): x';
    view.itemChanged('f', 'budget_exceeded', `budget_exceeded: ${words}`, counts({ budget_exceeded: 1 }), 0);
    view.itemChanged('g', 'budget_exceeded', 'budget_exceeded: other', counts({ budget_exceeded: 2 }), 0);
    expect(view.outcome(null)).toEqual([
      {
        state: 'failed',
        text: `stopped by the budget: 2 items did not fit in budget_usd; the first, f, ${words}`,
      },
    ]);
  });

  it("words the pre-flight's answer", () => {
    expect(
      checkTitle('http://h/v1', { kind: 'answered', balanceUsd: '12.500000', active: 1, limit: 3 }),
    ).toBe('Checked the service at http://h/v1: balance $12.50, 1/3 slots busy');
    expect(checkTitle('http://h/v1', { kind: 'refused' })).toBe(
      'Checked the service at http://h/v1: it refused the account',
    );
  });
});
