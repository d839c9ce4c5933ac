/**
 * A binary min-heap ordered by `before`. The download queue keeps thousands of tasks waiting in a
 * large run and takes the most urgent one per download: a scan of all of them each time made a
 * 5,000-item run quadratic.
 */
export class MinHeap<T> {
  readonly #items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  push(item: T): void {
    const items = this.#items;
    let at = items.push(item) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.#before(items[at]!, items[parent]!)) break;
      this.#swap(at, parent);
      at = parent;
    }
  }

  /** Removes and returns the first item, or undefined when empty. */
  pop(): T | undefined {
    const items = this.#items;
    const first = items[0];
    const last = items.pop();
    if (items.length === 0) return first;
    items[0] = last!;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let smallest = at;
      if (left < items.length && this.#before(items[left]!, items[smallest]!)) smallest = left;
      if (right < items.length && this.#before(items[right]!, items[smallest]!)) smallest = right;
      if (smallest === at) return first;
      this.#swap(at, smallest);
      at = smallest;
    }
  }

  #swap(a: number, b: number): void {
    const items = this.#items;
    [items[a], items[b]] = [items[b]!, items[a]!];
  }
}
