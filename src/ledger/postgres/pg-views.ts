import type { ItemEntry } from '../item-entries.js';
import type { ItemExport } from '../item-exports.js';
import type { ItemSummary } from '../item-summaries.js';
import type { PriceSample } from '../price-samples.js';
import type { SavedFileFacts } from '../saved-files.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

/** The read-only commands' one-row-per-item views in PostgreSQL (item-summaries.ts and its kin). */

export function itemSummaries(_c: PgLedgerConnection): IterableIterator<ItemSummary> {
  throw new Error('itemSummaries: not built yet');
}

export function itemEntries(_c: PgLedgerConnection): IterableIterator<ItemEntry> {
  throw new Error('itemEntries: not built yet');
}

export function itemExports(_c: PgLedgerConnection, _ids: readonly string[]): IterableIterator<ItemExport> {
  throw new Error('itemExports: not built yet');
}

export function paidItemsNotIn(_c: PgLedgerConnection, _ids: readonly string[]): string[] {
  throw new Error('paidItemsNotIn: not built yet');
}

export function priceSamples(_c: PgLedgerConnection): PriceSample[] {
  throw new Error('priceSamples: not built yet');
}

export function savedFileFacts(_c: PgLedgerConnection): IterableIterator<SavedFileFacts> {
  throw new Error('savedFileFacts: not built yet');
}
