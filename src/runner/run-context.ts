import pLimit from 'p-limit';
import type { MediaGenClient } from '../api/client.js';
import type { Ledger } from '../ledger/ledger.js';
import { spentMicros } from '../ledger/money-totals.js';
import type { ItemState } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import type { BudgetState } from './budget.js';
import type { Clock } from './clock.js';
import type { DownloadQueue } from './download-queue.js';
import type { RunReporter } from './reporter.js';
import { type ItemChange, RunState } from './run-state.js';

export interface RunOptions {
  /** Fixed poll interval; null means the service's last Retry-After, else 10 s. */
  pollIntervalMs: number | null;
  regenerateExpired: boolean;
  downloadConcurrency: number;
  /** Workspace limit when GET /account cannot tell (the service's documented default). */
  defaultSlotLimit: number;
  /** Longest wait for response headers or the next body chunk of a download. */
  downloadTimeoutMs?: number;
  /** Done items to generate a new take of, keeping the earlier one (run --redo). */
  redo?: readonly string[];
}

export interface RunDeps {
  client: MediaGenClient;
  ledger: Ledger;
  manifest: Manifest;
  clock: Clock;
  random: () => number;
  reporter: RunReporter;
}

/** Unanswered POSTs sent at once; far above any slot limit, it only bounds a runaway. */
const MAX_POSTS_AT_ONCE = 64;

/**
 * What every step of one run shares: its dependencies and options, its state, its download
 * queue, and the means to wake the loop and to end the run when a background task throws.
 */
export class RunContext {
  readonly deps: RunDeps;
  readonly options: RunOptions;
  readonly state: RunState;
  readonly downloads: DownloadQueue;
  readonly postLimit = pLimit(MAX_POSTS_AT_ONCE);
  #fatal: unknown = null;
  #wake = new AbortController();

  constructor(deps: RunDeps, options: RunOptions, downloads: (context: RunContext) => DownloadQueue) {
    this.deps = deps;
    this.options = options;
    this.state = new RunState(deps.manifest.concurrency ?? options.defaultSlotLimit);
    this.downloads = downloads(this);
  }

  get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? this.state.retryAfterMs ?? 10_000;
  }

  /** Runs a task in the background; a throw ends the run (the loop rethrows it), never unhandled. */
  background(task: Promise<unknown>): void {
    task.catch((error: unknown) => {
      this.#fatal ??= error;
      this.wake();
    });
  }

  throwIfFatal(): void {
    if (this.#fatal !== null) throw this.#fatal;
  }

  wake(): void {
    // abort() builds a DOMException (with a stack) on every call, even on an aborted signal: once is enough.
    if (!this.#wake.signal.aborted) this.#wake.abort();
  }

  async sleepUntilWoken(ms: number): Promise<void> {
    if (this.#wake.signal.aborted) this.#wake = new AbortController();
    await this.deps.clock.sleep(ms, this.#wake.signal);
    if (this.#wake.signal.aborted) this.#wake = new AbortController();
  }

  enqueue(itemId: string, notBefore = 0): void {
    this.state.enqueue(itemId, notBefore);
    this.wake();
  }

  /** Commits an item's new state to the ledger, then to memory, then tells the reporter. */
  setItem(itemId: string, state: ItemState, change: ItemChange = {}): void {
    // An item no longer in the manifest (its unanswered attempt was resolved) has no state to keep.
    if (!this.state.item(itemId)) return;
    this.deps.ledger.setItemState(itemId, { state, ...change });
    this.state.changeItem(itemId, state, change);
    const detail = change.errorCode
      ? `${change.errorCode}${change.errorMessage ? `: ${change.errorMessage}` : ''}`
      : null;
    this.deps.reporter.itemChanged(itemId, state, detail);
  }

  budgetState(): BudgetState {
    // Without a budget nothing reads spent or reserved, and summing the ledger per item is quadratic.
    if (this.deps.manifest.budgetMicros === null)
      return { budgetMicros: null, spentMicros: 0, reservedMicros: 0 };
    const totals = this.deps.ledger.moneyTotals();
    return {
      budgetMicros: this.deps.manifest.budgetMicros,
      spentMicros: spentMicros(totals),
      reservedMicros: totals.reservedMicros,
    };
  }

  /** Without its own cap under a budget, an item's max_cost_usd is what was left of the budget. */
  capComesFromBudget(itemId: string): boolean {
    return this.deps.manifest.budgetMicros !== null && this.state.item(itemId)?.item.maxCostMicros === null;
  }
}
