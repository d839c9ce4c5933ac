import type { ItemState } from '../ledger/records.js';

export interface ProgressSnapshot {
  total: number;
  byState: Record<ItemState, number>;
  /** This batch's unfinished jobs and unanswered POSTs. */
  unfinished: number;
  slotLimit: number;
  downloadsActive: number;
  downloadsQueued: number;
  spentMicros: number;
  budgetMicros: number | null;
  draining: boolean;
}

/** How the engine tells the outside what happens; the terminal UI and --json implement it. */
export interface RunReporter {
  itemChanged(itemId: string, state: ItemState, detail: string | null): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  progress(snapshot: ProgressSnapshot): void;
}

export const silentReporter: RunReporter = {
  itemChanged: () => undefined,
  log: () => undefined,
  progress: () => undefined,
};
