import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MinHeap } from '../../src/runner/min-heap.js';

interface Entry {
  deadline: number;
  order: number;
}

/** The download queue's order: earliest deadline first, then first come. */
const urgentFirst = (a: Entry, b: Entry) =>
  a.deadline < b.deadline || (a.deadline === b.deadline && a.order < b.order);

function drain<T>(heap: MinHeap<T>): T[] {
  const out: T[] = [];
  for (let item = heap.pop(); item !== undefined; item = heap.pop()) out.push(item);
  return out;
}

describe('MinHeap', () => {
  it('is empty to begin with and after its last item', () => {
    const heap = new MinHeap<Entry>(urgentFirst);
    expect(heap.pop()).toBeUndefined();
    heap.push({ deadline: 1, order: 0 });
    expect(heap.size).toBe(1);
    expect(heap.pop()).toEqual({ deadline: 1, order: 0 });
    expect(heap.size).toBe(0);
    expect(heap.pop()).toBeUndefined();
  });

  it('gives equal deadlines in the order they came, an infinite deadline last', () => {
    const heap = new MinHeap<Entry>(urgentFirst);
    for (const [order, deadline] of [5, Number.POSITIVE_INFINITY, 5, 3, 5].entries())
      heap.push({ deadline, order });
    expect(drain(heap).map((entry) => entry.order)).toEqual([3, 0, 2, 4, 1]);
  });

  it('after a pop, moves the smaller of two children up, the right one too', () => {
    // Pushed in this order the heap holds 1, 3, 2, 4: after popping 1, the 4 moved to the top must
    // sink below 2, the right child, not only below 3.
    const heap = new MinHeap<Entry>(urgentFirst);
    for (const [order, deadline] of [1, 3, 2, 4].entries()) heap.push({ deadline, order });
    expect(drain(heap).map((entry) => entry.deadline)).toEqual([1, 2, 3, 4]);
  });

  it('gives any pushes and pops in the order a full sort would', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constant(-1)), { maxLength: 200 }),
        (steps) => {
          // A step of -1 pops; any other value pushes that deadline.
          const heap = new MinHeap<Entry>(urgentFirst);
          const model: Entry[] = [];
          steps.forEach((step, order) => {
            if (step === -1) {
              model.sort((a, b) => a.deadline - b.deadline || a.order - b.order);
              expect(heap.pop()).toEqual(model.shift());
            } else {
              heap.push({ deadline: step, order });
              model.push({ deadline: step, order });
            }
            expect(heap.size).toBe(model.length);
          });
        },
      ),
    );
  });
});
