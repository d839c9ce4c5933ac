import type { ManifestItem } from '../../manifest/index.js';
import { namesTaken } from '../../manifest/taken-names.js';
import type { Decision } from './plan-decisions.js';

/**
 * What `plan` says of the items a file this ledger did not write keeps back, by run's own rule
 * (namesTaken, manifest/taken-names.ts) applied to the same items run would apply it to: those
 * it would submit (new, edited, retried, a redo, an expired one it generates again) or rename.
 * Decided before the budget walk, so that an item run will not submit is neither priced nor
 * counted among those to submit (`held_back`); a renamed one pays nothing either way and keeps its
 * label. Returns plan's warning for each, in manifest order.
 */
export function planHeldBack(
  items: readonly ManifestItem[],
  decisions: Array<Decision | undefined>,
  outputDir: string,
  foreign: readonly string[],
  saved: Iterable<readonly [string, string]>,
  shown: (path: string) => string,
): string[] {
  if (foreign.length === 0) return [];
  const position = new Map<string, number>();
  const candidates = items.filter((item, index) => {
    const decision = decisions[index];
    if (!decision?.submit && decision?.label !== 'renamed') return false;
    position.set(item.id, index);
    return true;
  });
  const held = namesTaken(outputDir, candidates, foreign, saved);
  const warnings: string[] = [];
  for (const item of candidates) {
    const paths = held.get(item.id);
    if (paths === undefined) continue;
    const index = position.get(item.id)!;
    const decision = decisions[index]!;
    const inTheWay = `${paths.map(shown).join(', ')} is in the way, a file this ledger did not write (run never overwrites one); move it elsewhere first`;
    const renamed = decision.label === 'renamed';
    if (!renamed) decisions[index] = { label: 'held_back', submit: false, reason: inTheWay };
    warnings.push(`${item.id}: run will not ${renamed ? 'rename' : 'submit'} it: ${inTheWay}`);
  }
  return warnings;
}
