import type { ItemRecord } from '../ledger/index.js';

/**
 * Items a run sends only because it was asked to (`regenerateExpired`, `retryFailed`, `redo`),
 * whose ledger row it leaves as it was until their first attempt is prepared (submit.ts): a run
 * stopped, refused or blocked before it sends one (a file in its way, the budget, a refused
 * account, an interrupt) then changes nothing, and writes no state a plain run would pay for.
 * A part of the run state (run-state.ts), with its own methods.
 */
export class UnsentItems {
  /** Item id -> its row as the ledger holds it. */
  readonly #rows = new Map<string, ItemRecord>();

  hold(record: ItemRecord): void {
    this.#rows.set(record.itemId, record);
  }

  /** The ledger's row of a held item, and the item no longer held; undefined when it was not. */
  release(itemId: string): ItemRecord | undefined {
    const row = this.#rows.get(itemId);
    this.#rows.delete(itemId);
    return row;
  }
}
