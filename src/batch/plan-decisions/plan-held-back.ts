import type { ManifestItem } from '../../manifest/index.js';
import { mayBeInTheWay, namesTaken } from '../../manifest/taken-names.js';
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
  const candidates = items.filter((_item, index) => isCandidate(decisions[index]));
  const taken = namesTaken(outputDir, candidates, foreign, saved);
  const held = new HeldBack((item) => taken.get(item.id), shown);
  items.forEach((item, index) => {
    decisions[index] = held.decide(item, decisions[index]!);
  });
  return held.warnings;
}

/** The items the rule looks at: those run would submit or rename. */
const isCandidate = (decision: Decision | undefined) => decision?.submit || decision?.label === 'renamed';

/**
 * The rule an item at a time, in manifest order, given the files in the way of an item (`held`,
 * of a candidate): a plan that streams its items (plan-stream.ts) tests each as it goes past.
 */
export class HeldBack {
  /** Plan's warning for each item held back, in manifest order. */
  readonly warnings: string[] = [];

  constructor(
    private readonly held: (item: ManifestItem) => readonly string[] | undefined,
    private readonly shown: (path: string) => string,
  ) {}

  /**
   * The same for a streamed plan, each item tested alone: exact where no file in the way is named
   * as a second file of an item (`<name>-<n>`), which another item's name may take first
   * (itemsInTheWay); streamable() says so.
   */
  static eachAlone(outputDir: string, foreign: readonly string[], shown: (path: string) => string): HeldBack {
    const may = mayBeInTheWay(outputDir, foreign);
    // Every file in the way is one `foreign` already holds: the ledger wrote none of them.
    return new HeldBack(
      (item) => (may(item) ? namesTaken(outputDir, [item], foreign, []).get(item.id) : undefined),
      shown,
    );
  }

  /** Whether eachAlone is exact for these files (see there). */
  static streamable(foreign: readonly string[]): boolean {
    return !foreign.some((path) => /-\d+$/.test(path.replace(/\.[^./\\]*$/, '')));
  }

  decide(item: ManifestItem, decision: Decision): Decision {
    if (!isCandidate(decision)) return decision;
    const paths = this.held(item);
    if (paths === undefined) return decision;
    const inTheWay = `${paths.map(this.shown).join(', ')} is in the way, a file this ledger did not write (run never overwrites one); move it elsewhere first`;
    const renamed = decision.label === 'renamed';
    this.warnings.push(`${item.id}: run will not ${renamed ? 'rename' : 'submit'} it: ${inTheWay}`);
    return renamed ? decision : { label: 'held_back', submit: false, reason: inTheWay };
  }
}
