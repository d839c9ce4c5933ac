import type { FileProblems } from '../../documents/file-problems.js';
import type { AttemptRecord, FailedTakes, ItemEntry } from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import { Rejections, rejectionsOf } from '../../runner/fallback.js';
import type { RecordedRequest } from '../../runner/item-plan.js';
import { variantsOfItems } from '../../runner/request-key.js';
import { failedTakesOf } from '../../runner/rerolls-due.js';
import { type DecideOptions, type Decision, decideItem } from './plan-decisions.js';
import type { PlanSource } from './plan-source.js';

/**
 * Each manifest item's decision, by position, the entries of items the manifest no longer lists,
 * in the ledger's order, and the positions of items the ledger does not know at all (a rename may
 * pair them, plan-renames.ts).
 */
export interface Decided {
  decisions: Array<Decision | undefined>;
  unlisted: ItemEntry[];
  unknown: number[];
}

/** --only: the plan speaks of the selected items; the others are neither run nor removed. */
export function listedOf(manifest: Manifest, only: ReadonlySet<string> | null): Manifest {
  return only ? { ...manifest, items: manifest.items.filter((item) => only.has(item.id)) } : manifest;
}

export function decideOptionsOf(
  inputs: { regenerateExpired?: boolean; retryFailed?: boolean; redo?: readonly string[] },
  files: FileProblems | undefined,
  nowMs: number,
  /** The ledger's jobs moderation rejected, and the variant each one's item is (request-key.ts). */
  rejected: { attempts: readonly AttemptRecord[]; variantOf: (itemId: string) => number } | null = null,
  /** The ledger's failed takes (Ledger.failedTakes): a checks_failed item's re-rolls owed. */
  failedTakes: readonly FailedTakes[] = [],
): DecideOptions {
  const redo = new Set(inputs.redo ?? []);
  return {
    regenerateExpired: inputs.regenerateExpired ?? false,
    retryFailed: inputs.retryFailed ?? false,
    redo,
    ...(files ? { files } : {}),
    nowMs,
    ...(failedTakes.length === 0 ? {} : { failedTakes: failedTakesOf(failedTakes) }),
    ...(rejected === null || rejected.attempts.length === 0
      ? {}
      : {
          rejections: new Rejections(rejectionsOf(rejected.attempts, rejected.variantOf), redo),
        }),
  };
}

/** Decides items as the ledger's entries go past, so no entry is kept (a streamed plan feeds it one at a time). */
export class EntryDecisions {
  readonly #manifest: Manifest;
  readonly #options: DecideOptions;
  readonly #position = new Map<string, number>();
  readonly #decided: Decided;

  constructor(manifest: Manifest, options: DecideOptions) {
    this.#manifest = manifest;
    this.#options = options;
    manifest.items.forEach((item, index) => {
      this.#position.set(item.id, index);
    });
    this.#decided = { decisions: new Array(manifest.items.length), unlisted: [], unknown: [] };
  }

  /** The manifest's item an entry is of, or undefined for an item the manifest no longer lists. */
  itemOf(itemId: string): Manifest['items'][number] | undefined {
    const index = this.#position.get(itemId);
    return index === undefined ? undefined : this.#manifest.items[index];
  }

  add(entry: ItemEntry, recorded: RecordedRequest, itemHash?: string): void {
    const index = this.#position.get(entry.itemId);
    if (index !== undefined)
      this.#decided.decisions[index] = decideItem(
        this.#manifest.items[index]!,
        entry,
        this.#options,
        recorded,
        itemHash,
      );
    else if (entry.record) this.#decided.unlisted.push(entry);
  }

  /** The items no entry was of are decided as new to the ledger. */
  finish(): Decided {
    const { decisions, unknown } = this.#decided;
    this.#manifest.items.forEach((item, index) => {
      if (decisions[index] !== undefined) return;
      unknown.push(index);
      decisions[index] = decideItem(item, undefined, this.#options, (attempt) => attempt);
    });
    return this.#decided;
  }
}

export function decideAll(
  manifest: Manifest,
  source: Pick<PlanSource, 'entries' | 'recorded'>,
  options: DecideOptions,
): Decided {
  const decisions = new EntryDecisions(manifest, options);
  for (const entry of source.entries) decisions.add(entry, source.recorded);
  return decisions.finish();
}

/** The variant each item of a manifest held whole is, by id (request-key.ts). */
export function variantsOf(manifest: Manifest): (itemId: string) => number {
  return variantsOfItems(manifest.items);
}
