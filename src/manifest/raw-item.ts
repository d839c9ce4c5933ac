import type { Source } from './problems.js';

/** An item as read from `items` or an `items_from` line or row, before any check, and where it was written. */
export interface RawItem {
  value: unknown;
  source: Source;
}
