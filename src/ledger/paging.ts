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
 * it runs in order with the writes called around it. The first page is read from the start (no key). Nothing is read of a batch never recorded.
 */
export async function* paged<K, R>(
  c: LedgerContext,
  page: (after: K | undefined) => Promise<Page<K, R>>,
): AsyncGenerator<R> {
  if (c.none) return;
  let after: K | undefined;
  for (;;) {
    const key = after;
    const { rows, next } = await c.db.step(() => page(key));
    yield* rows;
    if (next === null) return;
    after = next;
  }
}

/** The next key after a page of `keys`: its last one, or null when the page was not full. */
export function nextAfter<K>(keys: readonly K[]): K | null {
  return keys.length < PAGE_SIZE ? null : keys[keys.length - 1]!;
}
