import type { KeeperRecord } from '../ledger/index.js';
import { itemGroup, type ManifestItem } from '../manifest/index.js';

/**
 * Which take of each manifest item is kept (docs/gallery.md, "Keepers"), the one rule that
 * `keep`, `export`, `status`, `plan` and the sidecars share. Pure: the manifest's items and the
 * ledger's keeper rows in, answers out. A manifest item is a group: its variants' ledger items
 * (`variant.of`), or the item alone when it has none.
 */

/** One saved take of a ledger item: its attempt and the take number the ledger recorded. */
export interface SavedTakeRef {
  itemId: string;
  take: number;
}

/**
 * A recorded keeper the manifest no longer asks for: its variant is beyond the item's `variants`
 * now (`variant_not_asked`), or the item itself left the manifest (`item_not_asked`). The keeper
 * stays on record, so asking for it again makes it the item's keeper again.
 */
export interface KeeperOutside {
  keeper: KeeperRecord;
  /** The kept variant's number: 1 for the item's own id, n for `<id>.v<n>`. */
  variant: number;
  why: 'variant_not_asked' | 'item_not_asked';
}

export class KeptTakes {
  readonly #groupOf = new Map<string, string>();
  readonly #variants = new Map<string, number>();
  readonly #keepers = new Map<string, KeeperRecord>();
  /** Each kept ledger item, with the group that keeps it (what groupOf falls back on). */
  readonly #keptBy = new Map<string, string>();

  constructor(items: ReadonlyArray<Pick<ManifestItem, 'id' | 'variant'>>, keepers: readonly KeeperRecord[]) {
    for (const item of items) {
      const group = itemGroup(item);
      this.#groupOf.set(item.id, group);
      this.#variants.set(group, Math.max(this.#variants.get(group) ?? 0, item.variant?.count ?? 1));
    }
    for (const keeper of keepers) {
      this.#keepers.set(keeper.itemId, keeper);
      this.#keptBy.set(keeper.keptItemId, keeper.itemId);
    }
  }

  /**
   * The manifest item (group) a ledger item belongs to. A kept item the manifest no longer names
   * (variants lowered, item removed) still belongs to the item that keeps it; any other item the
   * manifest no longer names is its own.
   */
  groupOf(itemId: string): string {
    return this.#groupOf.get(itemId) ?? this.#keptBy.get(itemId) ?? itemId;
  }

  /** Whether the manifest asks for this ledger item now (an item, or one of its variants). */
  inManifest(itemId: string): boolean {
    return this.#groupOf.has(itemId);
  }

  /**
   * The recorded keepers whose kept take the manifest no longer asks for, in the ledger's order
   * (item id): named by `status` and `plan`, exported by `export --kept` as outside the manifest.
   */
  outside(): KeeperOutside[] {
    return [...this.#keepers.values()]
      .filter((keeper) => this.#groupOf.get(keeper.keptItemId) !== keeper.itemId)
      .map((keeper) => ({
        keeper,
        variant: variantNumber(keeper.itemId, keeper.keptItemId),
        why: this.#variants.has(keeper.itemId) ? 'variant_not_asked' : 'item_not_asked',
      }));
  }

  /** The keeper the ledger records for a group, if any. */
  keeperOf(group: string): KeeperRecord | undefined {
    return this.#keepers.get(group);
  }

  /**
   * What a sidecar says: true for the recorded keeper's take, false for any other take of an item
   * that has one, null (said nothing) while the item has no recorded keeper. `group` is the
   * take's item when the caller knows it better (a take kept until now outside the manifest).
   */
  recorded(take: SavedTakeRef, group = this.groupOf(take.itemId)): boolean | null {
    const keeper = this.#keepers.get(group);
    if (keeper === undefined) return null;
    return keeper.keptItemId === take.itemId && keeper.take === take.take;
  }

  /**
   * The take a group keeps: the recorded keeper, else, for an item with one variant that saved
   * exactly one take, that take (kept by itself: there is nothing to choose); else none.
   * `saved` is every saved take of the group's ledger items.
   */
  keptTake(group: string, saved: readonly SavedTakeRef[]): SavedTakeRef | null {
    const keeper = this.#keepers.get(group);
    if (keeper !== undefined) return { itemId: keeper.keptItemId, take: keeper.take };
    if ((this.#variants.get(group) ?? 1) === 1 && saved.length === 1) return saved[0]!;
    return null;
  }

  /** Manifest items asking for more than one variant that have no recorded keeper yet, in manifest order. */
  withoutKeeper(): string[] {
    return [...this.#variants]
      .filter(([group, count]) => count > 1 && !this.#keepers.has(group))
      .map(([g]) => g);
  }
}

/** The variant a ledger item is of a group: 1 for the group's own id, n for `<group>.v<n>`. */
export function variantNumber(group: string, itemId: string): number {
  const match = /^\.v([1-9][0-9]*)$/.exec(itemId.slice(group.length));
  return itemId.startsWith(group) && match !== null ? Number(match[1]) : 1;
}
