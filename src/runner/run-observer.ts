import type { ItemState } from '../ledger/index.js';

export interface ProgressSnapshot {
  total: number;
  byState: Record<ItemState, number>;
  /** This batch's unfinished jobs and unanswered POSTs. */
  unfinished: number;
  slotLimit: number;
  /**
   * A batch several runners share: its slots in use by all of them, as this runner last learnt it
   * (each admission says); `unfinished` is this runner's share. Null for a batch one run holds.
   */
  batchInUse: number | null;
  downloadsActive: number;
  downloadsQueued: number;
  /**
   * The bound on outputs paid for and not yet saved (unfinished jobs and downloads active or
   * queued): `--max-unsaved`, by default twice the slot limit.
   */
  unsavedLimit: number;
  /** Submitting is held at that bound until saving catches up. */
  savingFirst: boolean;
  spentMicros: number;
  budgetMicros: number | null;
  draining: boolean;
}

/** How the engine tells the outside what happens; the terminal UI and --json implement it. */
export interface RunObserver {
  /**
   * An item changed state. `counts` are the items per state right after this very change, so a
   * view that shows both the event and the counts never shows one without the other.
   */
  itemChanged(
    itemId: string,
    state: ItemState,
    detail: string | null,
    counts: Readonly<Record<ItemState, number>>,
  ): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  progress(snapshot: ProgressSnapshot): void;
}

export const silentObserver: RunObserver = {
  itemChanged: () => undefined,
  log: () => undefined,
  progress: () => undefined,
};
