import type { KeeperRecord } from '../ledger/records.js';
import type { ManifestItem } from '../manifest/index.js';

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

export class KeptTakes {
  readonly #groupOf = new Map<string, string>();
  readonly #variants = new Map<string, number>();
  readonly #keepers = new Map<string, KeeperRecord>();

  constructor(items: readonly ManifestItem[], keepers: readonly KeeperRecord[]) {
    for (const item of items) {
      const group = item.variant?.of ?? item.id;
      this.#groupOf.set(item.id, group);
      this.#variants.set(group, Math.max(this.#variants.get(group) ?? 0, item.variant?.count ?? 1));
    }
    for (const keeper of keepers) this.#keepers.set(keeper.itemId, keeper);
  }

  /** The manifest item (group) a ledger item belongs to; an item the manifest no longer names is its own. */
  groupOf(itemId: string): string {
    return this.#groupOf.get(itemId) ?? itemId;
  }

  /** The keeper the ledger records for a group, if any. */
  keeperOf(group: string): KeeperRecord | undefined {
    return this.#keepers.get(group);
  }

  /**
   * What a sidecar says: true for the recorded keeper's take, false for any other take of an item
   * that has one, null (said nothing) while the item has no recorded keeper.
   */
  recorded(take: SavedTakeRef): boolean | null {
    const keeper = this.#keepers.get(this.groupOf(take.itemId));
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
