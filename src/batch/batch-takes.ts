import type { Ledger } from '../ledger/ledger.js';
import type { SavedTake } from '../ledger/records.js';
import { itemGroup, type Manifest } from '../manifest/index.js';
import { formatUsd } from '../money.js';
import type { RecordTakes } from '../report/export-records.js';
import type { KeptRecord } from '../report/kept-records.js';
import { KeptTakes } from '../runner/kept-takes.js';

const NO_TAKES: RecordTakes = { take: null, kept: null, earlier: [] };
const FIRST_TAKE: RecordTakes = { take: 1, kept: null, earlier: [] };
const FIRST_TAKE_KEPT: RecordTakes = { take: 1, kept: true, earlier: [] };

/**
 * A batch's saved takes and keepers, read once, for `export`: each record's take and whether it
 * is kept, and `export --kept`'s one record per manifest item (docs/gallery.md, "Keepers").
 */
export class BatchTakes {
  readonly #rule: KeptTakes;
  readonly #byItem = new Map<string, SavedTake[]>();
  readonly #byGroup = new Map<string, SavedTake[]>();
  /** Plain export of a batch with no keeper and no take after the first: nothing more to read. */
  readonly #firstTakesOnly: boolean;

  constructor(
    readonly manifest: Manifest,
    ledger: Ledger | null,
    purpose: 'records' | 'kept' = 'kept',
  ) {
    const keepers = ledger?.keepers() ?? [];
    this.#rule = new KeptTakes(manifest.items, keepers);
    // Without a keeper or a later take, every saved take is its item's only one: reading
    // them all again would cost export a second and 130 MB at 100,000 items (docs/performance.md).
    this.#firstTakesOnly =
      purpose === 'records' && keepers.length === 0 && !(ledger?.hasLaterTakes() ?? false);
    if (this.#firstTakesOnly) return;
    for (const take of ledger?.savedTakes() ?? []) {
      push(this.#byItem, take.itemId, take);
      push(this.#byGroup, this.#rule.groupOf(take.itemId), take);
    }
  }

  /** The take a manifest item keeps (recorded, or its only one), or null. */
  keptOf(group: string): SavedTake | null {
    const takes = this.#byGroup.get(group) ?? [];
    const kept = this.#rule.keptTake(group, takes);
    if (kept === null) return null;
    return takes.filter((take) => take.itemId === kept.itemId && take.take === kept.take).pop() ?? null;
  }

  /** A ledger item's newest saved take (the files its record lists), its earlier ones, and which is kept. */
  recordTakes(itemId: string, saved: boolean): RecordTakes {
    if (this.#firstTakesOnly) {
      if (!saved) return NO_TAKES;
      // Its one take: kept by itself where the rule says so (an item of one variant), else not yet.
      const only = this.#rule.keptTake(this.#rule.groupOf(itemId), [{ itemId, take: 1 }]);
      return only === null ? FIRST_TAKE : FIRST_TAKE_KEPT;
    }
    const takes = this.#byItem.get(itemId) ?? [];
    const newest = takes[takes.length - 1];
    if (newest === undefined) return NO_TAKES;
    const kept = this.keptOf(this.#rule.groupOf(itemId));
    const mark = (take: SavedTake) => (kept === null ? null : kept.attemptId === take.attemptId);
    return {
      take: newest.take,
      kept: mark(newest),
      earlier: takes.slice(0, -1).map((take) => ({ take: take.take, kept: mark(take), files: take.files })),
    };
  }

  /** One record per manifest item with a kept take, in manifest order, and the items left out. */
  keptRecords(shown: (path: string) => string): { records: KeptRecord[]; withoutKeeper: string[] } {
    const records: KeptRecord[] = [];
    const withoutKeeper: string[] = [];
    const variantOf = new Map(this.manifest.items.map((item) => [item.id, item.variant?.number ?? 1]));
    for (const group of new Set(this.manifest.items.map((item) => itemGroup(item)))) {
      const kept = this.keptOf(group);
      if (kept === null) {
        withoutKeeper.push(group);
        continue;
      }
      records.push({
        id: group,
        item: kept.itemId,
        variant: variantOf.get(kept.itemId) ?? 1,
        take: kept.take,
        job_id: kept.jobId,
        net_cost_usd: formatUsd(kept.amountMicros - kept.refundedMicros),
        completed_at: kept.completedAt,
        files: kept.files.map((file) => ({ path: shown(file.path), sha256: file.sha256, bytes: file.bytes })),
      });
    }
    return { records, withoutKeeper };
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** Manifest items asking for more than one variant with no keeper recorded (status, plan). */
export function itemsWithoutKeeper(manifest: Manifest, ledger: Ledger | null): string[] {
  return new KeptTakes(manifest.items, ledger?.keepers() ?? []).withoutKeeper();
}
