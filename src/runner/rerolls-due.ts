import type { AttemptRecord, ItemRecord } from '../ledger/records.js';
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
  attempts: readonly AttemptRecord[],
): Promise<void> {
  if (![...records.values()].some((record) => record.state === 'checks_failed')) return;
  const failed = new Set(
    (await run.deps.ledger.takeChecks()).flatMap((check) =>
      check.outcome === 'failed' ? [check.attemptId] : [],
    ),
  );
  for (const attempt of attempts)
    if (failed.has(attempt.id) && records.get(attempt.itemId)?.requestHash === attempt.requestHash)
      run.checks.failedBefore(attempt.itemId);
}

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
