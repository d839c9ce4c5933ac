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

/**
 * How the runner tells the outside what happens, each event once: `run` emits each call as a
 * `RunHandle` event (`item`, `log`, `progress`), and every view of a run reads those events.
 */
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
