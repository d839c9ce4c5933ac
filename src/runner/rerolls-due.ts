import type { FailedTakes, ItemRecord } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import { mayReroll } from './reroll.js';
import type { RunContext } from './run-context.js';

/**
 * Re-rolls a run owes from before it (docs/checks.md): an item left checks_failed by a run that
 * stopped, or by `mediabatch check`, is bought again at the next run while its request's failed
 * takes are within its `rerolls`, counted from the ledger.
 */

/**
 * The takes of each item whose check failed, as the ledger holds them, counted for the item's
 * current request: what its re-rolls are counted against in this run (reroll.ts). Read only when an
 * item is checks_failed.
 */
export async function countFailedTakes(
  run: RunContext,
  records: ReadonlyMap<string, ItemRecord>,
): Promise<void> {
  if (![...records.values()].some((record) => record.state === 'checks_failed')) return;
  const failed = failedTakesOf(await run.deps.ledger.failedTakes());
  for (const record of records.values()) {
    const takes = failed(record.itemId, record.requestHash);
    if (takes > 0) run.checks.failedBefore(record.itemId, takes);
  }
}

/** The ledger's failed takes (Ledger.failedTakes) as a count per item and request: for `run` and `plan` alike. */
export function failedTakesOf(rows: readonly FailedTakes[]): FailedTakesOf {
  const byItem = new Map<string, Map<string, number>>();
  for (const row of rows) {
    const own = byItem.get(row.itemId) ?? new Map<string, number>();
    byItem.set(row.itemId, own.set(row.requestHash, Number(row.takes)));
  }
  return (itemId, hash) => byItem.get(itemId)?.get(hash) ?? 0;
}

/** How many takes of an item, sent for the request of this hash, failed their check. */
export type FailedTakesOf = (itemId: string, hash: string) => number;

/** A checks_failed item whose request is unchanged and has re-rolls left (docs/checks.md). */
export function rerollsNow(
  run: RunContext,
  item: ManifestItem,
  record: ItemRecord,
  hash: string,
  adopted: boolean,
): boolean {
  if (adopted || record.state !== 'checks_failed' || record.requestHash !== hash) return false;
  return mayReroll(run.checks.failedTakes(item.id), item.rerolls ?? 0);
}
