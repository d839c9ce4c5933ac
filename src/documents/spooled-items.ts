import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READ_BYTES, SpoolFile } from './spool-file.js';

/**
 * A document's items kept aside as they are made, until the document can be written in order:
 * `plan` and `status` print their totals before their items, and know them only after the last
 * (docs/performance.md, "Issue 53"). The first items are held in memory; past `held` of them,
 * all go to a temporary file as JSON lines, and are read back from it each time the items are
 * iterated, a block at a time: a million items' lines are never held. JSON gives each item back
 * as it was made: plain objects of strings, numbers, booleans, null and arrays.
 * `close` removes the file.
 */
export class SpooledItems<T> implements Iterable<T> {
  #held: T[] = [];
  #dir: string | null = null;
  #file: SpoolFile | null = null;
  #count = 0;

  /** Items held in memory before they go to a file (the default holds a small batch's whole). */
  constructor(private readonly held = 10_000) {}

  /** Items already held whole (a small batch's), as spooled items that never go to a file. */
  static of<T>(items: readonly T[]): SpooledItems<T> {
    const spooled = new SpooledItems<T>(Number.POSITIVE_INFINITY);
    for (const item of items) spooled.add(item);
    return spooled;
  }

  get length(): number {
    return this.#count;
  }

  add(item: T): void {
    this.#count += 1;
    if (this.#file !== null) {
      this.#file.add(JSON.stringify(item));
      return;
    }
    this.#held.push(item);
    if (this.#held.length <= this.held) return;
    this.#dir = mkdtempSync(join(tmpdir(), 'mediabatch-items-'));
    this.#file = new SpoolFile(join(this.#dir, 'items.jsonl'), '\n');
    for (const each of this.#held) this.#file.add(JSON.stringify(each));
    this.#held = [];
  }

  *[Symbol.iterator](): Iterator<T> {
    if (this.#file === null) {
      yield* this.#held;
      return;
    }
    const decoder = new TextDecoder();
    let rest = '';
    for (const block of this.#file.blocks(Buffer.allocUnsafe(READ_BYTES))) {
      const text = rest + decoder.decode(block, { stream: true });
      const lines = text.split('\n');
      rest = lines.pop()!;
      for (const line of lines) yield JSON.parse(line) as T;
    }
    rest += decoder.decode();
    if (rest !== '') yield JSON.parse(rest) as T;
  }

  close(): void {
    this.#file?.close();
    this.#file = null;
    this.#held = [];
    if (this.#dir !== null) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = null;
  }
}

/** A document whose spooled items are read into an array (a batch small enough to hold), its spool removed. */
export function itemsHeld<T, D extends { items: SpooledItems<T> }>(
  document: D,
): Omit<D, 'items'> & { items: T[] } {
  try {
    return { ...document, items: [...document.items] };
  } finally {
    document.items.close();
  }
}
