import type { ItemEntry } from '../../ledger/index.js';
import type { ManifestItem } from '../../manifest/index.js';
import { holdsPaidResult, pairRenames, type RemovedCandidate, type Rename } from '../../runner/renames.js';
import { requestHash } from '../../runner/request.js';
import type { Decision } from './plan-decisions.js';

/**
 * What `plan` says of items renamed with their request unchanged: by the run's own pairing rule
 * (runner/renames.ts), the new item takes the removed one's paid result, so it is neither new
 * (nothing is paid) nor is the old one removed. Pure.
 */

export interface RenamedItem {
  from: string;
  to: string;
}

/**
 * The pairs among `unlisted` (removed items, with their latest attempts) and the items the ledger
 * does not know (`unknown`, their positions in `items`); each paired position's decision becomes
 * `renamed`. Returns the pairs and the removed entries left unpaired.
 */
export function planRenames(
  items: readonly ManifestItem[],
  unknown: readonly number[],
  unlisted: readonly ItemEntry[],
  decisions: Array<Decision | undefined>,
): { renamed: RenamedItem[]; removed: ItemEntry[] } {
  const removed = removedCandidates(unlisted);
  // Hashing every new item costs a tenth of a large plan: only when a removed one could pair.
  if (removed.length === 0 || unknown.length === 0) return { renamed: [], removed: [...unlisted] };
  const added = unknown.map((index) => ({ id: items[index]!.id, hash: requestHash(items[index]!) }));
  const pairs = pairRenames(removed, added);
  const position = new Map(unknown.map((index) => [items[index]!.id, index]));
  const byId = new Map(unlisted.map((entry) => [entry.itemId, entry]));
  for (const pair of pairs) decisions[position.get(pair.to)!] = renamedDecision(pair, byId.get(pair.from)!);
  const paired = new Set(pairs.map((pair) => pair.from));
  return { renamed: pairs, removed: unlisted.filter((entry) => !paired.has(entry.itemId)) };
}

/** The removed entries that hold a paid result a new name can take over (runner/renames.ts). */
export function removedCandidates(unlisted: readonly ItemEntry[]): RemovedCandidate[] {
  return unlisted.flatMap((entry) =>
    entry.record && holdsPaidResult(entry.record, entry.attempt)
      ? [{ id: entry.itemId, hash: entry.record.requestHash, order: entry.attempt.id }]
      : [],
  );
}

export function renamedDecision(pair: Rename, entry: ItemEntry): Decision {
  const job = entry.attempt?.filesSaved
    ? 'its saved files take the new name'
    : `its job ${entry.attempt?.jobId ?? ''} is followed and saved under the new name`;
  return {
    label: 'renamed',
    submit: false,
    renamedFrom: pair.from,
    reason: `the same request as ${pair.from}: nothing to pay; ${job}`,
  };
}
