import type { LedgerContext } from './ledger-context.js';

/**
 * Keys read per page by the streamed reads (status, plan, export): a page of 2,000 items is a few
 * hundred kB, so a million items stream in bounded memory on either database (docs/performance.md).
 */
export const PAGE_SIZE = 2000;

/** One page: its rows, and the key to read the next one after (null: that was the last). */
export interface Page<K, R> {
  rows: R[];
  next: K | null;
}

/**
 * Rows read a page at a time, by key (keyset paging: each page starts after the last key of the
 * one before, found through an index, never by an offset). Each page is a step of its own, so
 * it runs in order with the writes called around it. The first page is read from the start (no
 * key). Nothing is read of a batch never recorded.
 */
export function paged<K, R>(
  c: LedgerContext,
  page: (after: K | undefined) => Promise<Page<K, R>>,
): AsyncIterable<R> {
  return { [Symbol.asyncIterator]: () => new Pages(c, page) };
}

/**
 * The iterator of paged(), by hand rather than an async generator: a row of a page already read
 * is handed over with one resolved promise, where a generator's machinery cost several per row
 * (a fifth of a 100,000-item walk).
 */
class Pages<K, R> implements AsyncIterator<R> {
  #rows: R[] = [];
  #at = 0;
  #after: K | undefined = undefined;
  #done: boolean;

  constructor(
    readonly c: LedgerContext,
    readonly page: (after: K | undefined) => Promise<Page<K, R>>,
  ) {
    this.#done = c.none;
  }

  next(): Promise<IteratorResult<R>> {
    if (this.#at < this.#rows.length) return Promise.resolve({ value: this.#rows[this.#at++]!, done: false });
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    return this.#read();
  }

  async #read(): Promise<IteratorResult<R>> {
    // The page read is let go before the next one is read: held while the next one's rows are
    // made, its rows outlived a young collection, and a million items' pages ended up in the old
    // generation (export's peak RSS twice what it needs).
    this.#rows = [];
    const after = this.#after;
    const { rows, next } = await this.c.db.step(() => this.page(after));
    this.#rows = rows;
    this.#at = 0;
    this.#done = next === null;
    this.#after = next ?? undefined;
    return this.next();
  }
}

/** The next key after a page of `keys`: its last one, or null when the page was not full. */
export function nextAfter<K>(keys: readonly K[]): K | null {
  return keys.length < PAGE_SIZE ? null : keys[keys.length - 1]!;
}

/**
 * Given ids walked `size` at a time, in their order (repeats kept): `read` makes a page's rows
 * from its ids and the same without repeats.
 */
export function pagedIds<R>(
  c: LedgerContext,
  ids: readonly string[],
  size: number,
  read: (page: readonly string[], wanted: readonly string[]) => Promise<R[]>,
): AsyncIterable<R> {
  return paged(c, async (after: number | undefined) => {
    const from = after ?? 0;
    const page = ids.slice(from, from + size);
    const next = from + size < ids.length ? from + size : null;
    return { rows: page.length === 0 ? [] : await read(page, [...new Set(page)]), next };
  });
}
