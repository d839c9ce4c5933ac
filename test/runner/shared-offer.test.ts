import { describe, expect, it } from 'vitest';
import type { RunnerClaims } from '../../src/ledger/ledger.js';
import { aheadOf, NO_ROOM_RETRY_MS, SharedWork } from '../../src/runner/shared-runners.js';
import { SubmitQueue } from '../../src/runner/submit-queue.js';

// The offer never reaches the ledger: no claim is made by these tests.
const noClaims = {} as RunnerClaims;

describe('what a runner of a shared batch offers its next admission', () => {
  it('offers every own free slot until an admission has counted the batch', () => {
    expect(new SharedWork(noClaims).offer(150, 200, 50)).toBe(150);
  });

  it('offers the batch’s room as the last admission left it, plus what this run freed since', () => {
    const work = new SharedWork(noClaims);
    // The batch had 190 of 200 in use, 40 of them this run's.
    work.admittedWith(190, 40);
    expect(work.offer(160, 200, 40)).toBe(10);
    // Since then, 15 of this run's jobs ended: their slots are free for the batch too.
    expect(work.offer(175, 200, 25)).toBe(25);
    // Never more than this run's own free slots.
    expect(work.offer(20, 200, 25)).toBe(20);
  });

  it('still offers a few when the batch looked full: other runners free slots unseen', () => {
    const work = new SharedWork(noClaims);
    work.admittedWith(200, 50);
    expect(work.offer(150, 200, 50)).toBe(SharedWork.PROBE_OFFER);
    expect(work.offer(3, 200, 50)).toBe(3);
  });

  it('counts the batch’s slots again, instead of probing, when the batch looked full', async () => {
    // The count other runners' admissions and jobs left, read one time after another.
    const counts = [200, 188];
    let reads = 0;
    const counting = {
      slotsInUse: async () => {
        reads += 1;
        return counts.shift()!;
      },
    } as unknown as RunnerClaims;
    const work = new SharedWork(counting);
    // Until an admission has counted, and while room is left, no count: the offer as before.
    expect(await work.offerNow(150, 200, 50, 0)).toBe(150);
    work.admittedWith(190, 50);
    expect(await work.offerNow(150, 200, 50, 0)).toBe(10);
    expect(reads).toBe(0);
    work.admittedWith(200, 50);
    // Still full: nothing offered, and no count again before NO_ROOM_RETRY_MS has passed.
    expect(await work.offerNow(150, 200, 50, 1_000)).toBe(0);
    expect(await work.offerNow(150, 200, 50, 1_000 + NO_ROOM_RETRY_MS - 1)).toBe(0);
    expect(reads).toBe(1);
    // What this run freed meanwhile it offers at once, without a count.
    expect(await work.offerNow(160, 200, 40, 1_000 + NO_ROOM_RETRY_MS - 1)).toBe(10);
    expect(reads).toBe(1);
    // Then 12 slots freed by others: those only, no probe.
    expect(await work.offerNow(150, 200, 50, 1_000 + NO_ROOM_RETRY_MS)).toBe(12);
    expect(reads).toBe(2);
    // No own free slot: nothing to count for.
    expect(await work.offerNow(0, 200, 50, 5_000)).toBe(0);
    expect(reads).toBe(2);
  });
});

describe('the submit queue', () => {
  it('gives ready items oldest first, moves a re-added item to the end with its new time', () => {
    const queue = new SubmitQueue();
    for (const id of ['a', 'b', 'c']) queue.add(id);
    queue.add('a', 1_000);
    expect([...queue.ready(500)]).toEqual(['b', 'c']);
    expect(queue.nextDelay(500)).toBe(500);
    const later = new SubmitQueue();
    later.add('x', 1_000);
    expect(later.hasReady(999)).toBe(false);
    expect(later.hasReady(1_000)).toBe(true);
    expect([...queue.ready(1_000)]).toEqual(['b', 'c', 'a']);
    expect(queue.length).toBe(3);
  });

  it('lets the item it gave be removed while it is read, and stops reading when the reader stops', () => {
    const queue = new SubmitQueue();
    for (const id of ['a', 'b', 'c', 'd']) queue.add(id);
    const taken: string[] = [];
    for (const id of queue.ready(0)) {
      queue.remove(id);
      taken.push(id);
      if (taken.length === 2) break;
    }
    expect(taken).toEqual(['a', 'b']);
    expect([...queue.ready(0)]).toEqual(['c', 'd']);
    expect(queue.nextDelay(0)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('the items a runner of a shared batch asks about beyond its offer', () => {
  it('looks twice as far as it offers, within bounds', () => {
    expect(SharedWork.lookAhead(1)).toBe(SharedWork.PROBE_OFFER * 4);
    expect(SharedWork.lookAhead(50)).toBe(100);
    expect(SharedWork.lookAhead(1000)).toBe(SharedWork.MOST_AHEAD);
  });

  it('names the next queued items with the newest seq it knows of each', () => {
    const queue = new SubmitQueue();
    for (const id of ['a', 'b', 'c', 'd']) queue.add(id);
    queue.add('later', 5_000);
    const seqs = new Map([['b', 2]]);
    expect(aheadOf(queue.ready(0), 3, (id) => seqs.get(id) ?? 0)).toEqual([
      { itemId: 'a', seq: 0 },
      { itemId: 'b', seq: 2 },
      { itemId: 'c', seq: 0 },
    ]);
    expect(aheadOf(queue.ready(0), 10, () => 0).map((each) => each.itemId)).toEqual(['a', 'b', 'c', 'd']);
  });
});
