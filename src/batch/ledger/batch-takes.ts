import type { ExportCheck, RecordTakes } from '../../documents/export-records.js';
import type { KeeperOutsideManifest, KeptRecord } from '../../documents/kept-records.js';
import { shownFrom } from '../../documents/shown-path.js';
import {
  type KeeperRecord,
  type RecordReads,
  type SavedTake,
  shownCheck,
  type TakeCheckRecord,
  type TakeLedger,
} from '../../ledger/index.js';
import { itemGroup, type Manifest, type ManifestItem } from '../../manifest/index.js';
import { formatUsd } from '../../money.js';
import { KeptTakes, variantNumber } from '../../runner/kept-takes.js';

const NO_TAKES: RecordTakes = { take: null, kept: null, earlier: [], check: null };

/**
 * The manifest's items the rule of keepers looks at: all of them, or, for a manifest too large
 * to hold (which has no variants), those it lists of the items its keepers name (keeperItems).
 */
type TakesManifest = { items: ReadonlyArray<Pick<ManifestItem, 'id' | 'variant'>> };

/** The take a manifest item keeps, and whether the manifest still asks for it (`export --kept`). */
export interface KeptTakeOf {
  /** The manifest item's id (the group of its variants). */
  group: string;
  take: SavedTake;
  variant: number;
  /** False for a keeper whose variant, or whole item, the manifest no longer asks for. */
  inManifest: boolean;
}

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

  /** Reads what the purpose needs: `records` skips the saved takes when every take is its item's first. */
  static async read(
    manifest: TakesManifest,
    ledger: (RecordReads & TakeLedger) | null,
    purpose: 'records' | 'kept' = 'kept',
  ): Promise<BatchTakes> {
    const keepers = (await ledger?.keepers()) ?? [];
    // Without a keeper or a later take, every saved take is its item's only one: reading
    // them all again would cost export a second and 130 MB at 100,000 items (docs/performance.md).
    const firstTakesOnly =
      purpose === 'records' && keepers.length === 0 && !((await ledger?.hasLaterTakes()) ?? false);
    const saved = firstTakesOnly ? null : ((await ledger?.savedTakes()) ?? []);
    const checks = purpose === 'records' ? ((await ledger?.takeChecks()) ?? []) : [];
    return new BatchTakes(manifest, keepers, saved, checks);
  }

  /** Each take's check (docs/checks.md), by its attempt and by its job. */
  readonly #checkOfAttempt = new Map<number, ExportCheck>();
  readonly #checkOfJob = new Map<string, ExportCheck>();

  private constructor(
    readonly manifest: TakesManifest,
    keepers: readonly KeeperRecord[],
    saved: readonly SavedTake[] | null,
    checks: readonly TakeCheckRecord[] = [],
  ) {
    for (const check of checks) {
      const shown = shownCheck(check);
      this.#checkOfAttempt.set(check.attemptId, shown);
      if (check.jobId) this.#checkOfJob.set(check.jobId, shown);
    }
    this.#rule = new KeptTakes(manifest.items, keepers);
    this.#firstTakesOnly = saved === null;
    for (const take of saved ?? []) {
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

  /**
   * A ledger item's newest saved take (the files its record lists, of job `jobId`), its earlier
   * ones, which is kept, and each one's check.
   */
  recordTakes(itemId: string, saved: boolean, jobId: string | null = null): RecordTakes {
    if (this.#firstTakesOnly) {
      if (!saved) return NO_TAKES;
      // Its one take: kept by itself where the rule says so (an item of one variant), else not yet.
      const only = this.#rule.keptTake(this.#rule.groupOf(itemId), [{ itemId, take: 1 }]);
      const check = (jobId === null ? undefined : this.#checkOfJob.get(jobId)) ?? null;
      return { take: 1, kept: only === null ? null : true, earlier: [], check };
    }
    const takes = this.#byItem.get(itemId) ?? [];
    const newest = takes[takes.length - 1];
    if (newest === undefined) return NO_TAKES;
    const kept = this.keptOf(this.#rule.groupOf(itemId));
    const mark = (take: SavedTake) => (kept === null ? null : kept.attemptId === take.attemptId);
    const checkOf = (take: SavedTake) => this.#checkOfAttempt.get(take.attemptId) ?? null;
    return {
      take: newest.take,
      kept: mark(newest),
      earlier: takes
        .slice(0, -1)
        .map((take) => ({ take: take.take, kept: mark(take), files: take.files, check: checkOf(take) })),
      check: checkOf(newest),
    };
  }

  /**
   * The kept take of each manifest item, in manifest order, then those of the items the manifest
   * no longer names whose keeper is on record, in id order; and the manifest items left out.
   */
  keptTakes(): { kept: KeptTakeOf[]; withoutKeeper: string[] } {
    const kept: KeptTakeOf[] = [];
    const withoutKeeper: string[] = [];
    const variantOf = new Map(this.manifest.items.map((item) => [item.id, item.variant?.number ?? 1]));
    const add = (group: string, take: SavedTake) =>
      kept.push({
        group,
        take,
        variant: variantOf.get(take.itemId) ?? variantNumber(group, take.itemId),
        inManifest: this.#rule.inManifest(take.itemId),
      });
    for (const group of new Set(this.manifest.items.map((item) => itemGroup(item)))) {
      const take = this.keptOf(group);
      if (take === null) withoutKeeper.push(group);
      else add(group, take);
    }
    for (const { keeper, why } of this.#rule.outside()) {
      const take = why === 'item_not_asked' ? this.keptOf(keeper.itemId) : null;
      if (take !== null) add(keeper.itemId, take);
    }
    return { kept, withoutKeeper };
  }
}

/** A kept take as `export --kept` writes it, its paths shown from the manifest's folder. */
export function keptRecord(kept: KeptTakeOf, shown: (path: string) => string): KeptRecord {
  const { take } = kept;
  return {
    id: kept.group,
    item: take.itemId,
    variant: kept.variant,
    take: take.take,
    job_id: take.jobId,
    net_cost_usd: formatUsd(take.amountMicros - take.refundedMicros),
    completed_at: take.completedAt,
    files: take.files.map((file) => ({ path: shown(file.path), sha256: file.sha256, bytes: file.bytes })),
    in_manifest: kept.inManifest,
  };
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/**
 * What `status` and `plan` say of keepers: the manifest items asking for more than one variant
 * with no keeper recorded, and the keepers the manifest no longer asks for (docs/gallery.md). The
 * saved takes are read only when there is such a keeper, for its files.
 */
export async function keeperFields(
  manifest: Pick<Manifest, 'file'> & { items: ReadonlyArray<Pick<ManifestItem, 'id' | 'variant'>> },
  ledger: TakeLedger | null,
): Promise<{ without_keeper: string[]; keepers_outside_manifest: KeeperOutsideManifest[] }> {
  const rule = new KeptTakes(manifest.items, (await ledger?.keepers()) ?? []);
  const outside = rule.outside();
  const saved = outside.length > 0 ? ((await ledger?.savedTakes()) ?? []) : [];
  const shown = shownFrom(manifest.file);
  return {
    without_keeper: rule.withoutKeeper(),
    keepers_outside_manifest: outside.map(({ keeper, variant, why }) => ({
      id: keeper.itemId,
      item: keeper.keptItemId,
      variant,
      take: keeper.take,
      why,
      paths: (
        saved.filter((take) => take.itemId === keeper.keptItemId && take.take === keeper.take).pop()?.files ??
        []
      ).map((file) => shown(file.path)),
    })),
  };
}

/**
 * keeperFields for a manifest whose items are not held (a streamed one, which has no variants):
 * the rule needs only the items the keepers name, and `has` says which of those the manifest lists.
 */
export async function keeperFieldsOf(
  manifest: Pick<Manifest, 'file'>,
  has: (itemId: string) => boolean,
  ledger: TakeLedger | null,
): Promise<{ without_keeper: string[]; keepers_outside_manifest: KeeperOutsideManifest[] }> {
  return keeperFields({ file: manifest.file, items: await keeperItems(has, ledger) }, ledger);
}

/**
 * Of the items the ledger's keepers name, those a manifest without variants lists (`has`): all the
 * rule of keepers (KeptTakes) needs of a manifest too large to hold.
 */
export async function keeperItems(
  has: (itemId: string) => boolean,
  ledger: TakeLedger | null,
): Promise<Array<{ id: string }>> {
  const keepers = (await ledger?.keepers()) ?? [];
  const named = new Set(keepers.flatMap((keeper) => [keeper.itemId, keeper.keptItemId]));
  return [...named].filter(has).map((id) => ({ id }));
}
