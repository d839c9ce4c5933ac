import { Writable } from 'node:stream';
import { DefaultRenderer, Listr, ListrTaskState } from 'listr2';
import { describe, expect, it, vi } from 'vitest';
import { ListrRunView } from '../../../src/cli/ui/listr-view.js';
import { type ItemState, zeroCounts } from '../../../src/ledger/records.js';

const counts = (over: Partial<Record<ItemState, number>>): Record<ItemState, number> => ({
  ...zeroCounts(),
  ...over,
});

/** A terminal that keeps what it is sent. */
function terminal() {
  let text = '';
  const out = Object.assign(
    new Writable({
      write: (chunk, _encoding, done) => {
        text += String(chunk);
        done();
      },
    }),
    { isTTY: true, columns: 110, rows: 30 },
  );
  return { out, written: () => text };
}

describe('the live view is a listr2 task list', () => {
  it('draws its phases as listr2 tasks, failed items and stops as failed and skipped listr2 tasks', async () => {
    const { out, written } = terminal();
    const view = new ListrRunView(out, { title: 'spring (3 items)', checked: 'Checked the service' });
    const itemChanged = (
      itemId: string,
      state: ItemState,
      detail: string | null,
      now: Record<ItemState, number>,
    ) => view.handle({ name: 'item', payload: { itemId, state, detail, counts: now } });
    view.start();
    view.handle({
      name: 'progress',
      payload: {
        total: 3,
        byState: counts({ pending: 3 }),
        unfinished: 0,
        slotLimit: 2,
        batchInUse: null,
        downloadsActive: 0,
        downloadsQueued: 0,
        unsavedLimit: 4,
        savingFirst: false,
        spentMicros: 0,
        budgetMicros: 1_000_000,
        draining: false,
      },
    });
    itemChanged('a', 'in_flight', null, counts({ in_flight: 1, pending: 2 }));
    itemChanged('b', 'in_flight', null, counts({ in_flight: 2, pending: 1 }));
    // While it runs, each job in flight has a subtask line of its own. listr2 starts its tasks on
    // its own schedule, so the lanes are waited for (a loaded machine took more than 250 ms), and
    // their age is whatever the clock says by then.
    const lanes = () => (view.taskList.tasks[1]?.subtasks ?? []).map((task) => task.title).filter(Boolean);
    await vi.waitFor(() => expect(lanes()).toHaveLength(2), { timeout: 20_000, interval: 20 });
    expect(lanes()).toEqual([
      expect.stringMatching(/^a: in flight \d+s$/),
      expect.stringMatching(/^b: in flight \d+s$/),
    ]);
    itemChanged('a', 'done', null, counts({ done: 1, in_flight: 1, pending: 1 }));
    itemChanged('b', 'failed', 'content_rejected: no', counts({ done: 1, failed: 1, pending: 1 }));
    itemChanged('c', 'budget_exceeded', null, counts({ done: 1, failed: 1, budget_exceeded: 1 }));
    await view.finish({ kind: 'draining' });

    const list = view.taskList;
    expect(list).toBeInstanceOf(Listr);
    expect(list.rendererClass.prototype).toBeInstanceOf(DefaultRenderer);
    const [check, generate, save] = list.tasks;
    expect(list.tasks).toHaveLength(3);
    expect(check?.title).toBe('Checked the service');
    expect(check?.state).toBe(ListrTaskState.COMPLETED);
    expect(generate?.title?.split('\n')[0]).toMatch(
      /^Generated spring \(3 items\): 3\/3 finished, took \d+s$/,
    );
    expect(save?.title).toBe('Saved the files of 1 item');
    const ended = (generate?.subtasks ?? []).filter((task) => task.title);
    expect(ended.map((task) => [task.state, task.message.error ?? task.message.skip])).toEqual([
      [ListrTaskState.FAILED, 'b: failed (content_rejected: no)'],
      [ListrTaskState.FAILED, 'stopped by the budget: 1 item did not fit in budget_usd'],
      [
        ListrTaskState.SKIPPED,
        'stopped by Ctrl-C: nothing new was submitted; jobs in flight were finished and saved',
      ],
    ]);
    expect(lanes().filter((title) => /: in flight \d/.test(title ?? ''))).toEqual([]);
    // The last frame, as listr2 leaves it on the screen.
    const last = written().split('\u001b[?25h')[0]!;
    expect(last).toContain('✔ Checked the service');
    expect(last).toContain('✖ b: failed (content_rejected: no)');
    expect(last).toContain('↓ stopped by Ctrl-C');
    expect(last).toContain('✔ Saved the files of 1 item');
  });
});
