import type { Ledger } from '../ledger/ledger.js';
import type { SavedTake } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import { formatUsd } from '../money.js';
import type { RecordTakes } from '../report/export-records.js';
import type { KeptRecord } from '../report/kept-records.js';
import { KeptTakes } from '../runner/kept-takes.js';

/**
 * A batch's saved takes and keepers, read once, for `export`: each record's take and whether it
 * is kept, and `export --kept`'s one record per manifest item (docs/gallery.md, "Keepers").
 */
export class BatchTakes {
  readonly #rule: KeptTakes;
  readonly #byItem = new Map<string, SavedTake[]>();
  readonly #byGroup = new Map<string, SavedTake[]>();

  constructor(
    readonly manifest: Manifest,
    ledger: Ledger | null,
  ) {
    this.#rule = new KeptTakes(manifest.items, ledger?.keepers() ?? []);
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
  recordTakes(itemId: string): RecordTakes {
    const takes = this.#byItem.get(itemId) ?? [];
    const newest = takes[takes.length - 1];
    if (newest === undefined) return { take: null, kept: null, earlier: [] };
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
    for (const group of new Set(this.manifest.items.map((item) => item.variant?.of ?? item.id))) {
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
