import pLimit from 'p-limit';
import {
  type AttemptRecord,
  type ItemState,
  type LedgerLifecycle,
  type RecordReads,
  type RunLedger,
  type SharedLedger,
  spentMicros,
  type TakeLedger,
} from '../ledger/index.js';
import type { Manifest, ManifestItem } from '../manifest/index.js';
import type { MediaGenClient } from '../service-client/client.js';
import type { Account } from '../service-client/schemas.js';
import type { OutputStore } from '../storage/output-store.js';
import type { BudgetState } from './budget.js';
import { CheckTally } from './check-tally.js';
import type { Clock } from './clock.js';
import type { DownloadQueue } from './download-queue.js';
import { Rejections } from './fallback.js';
import { KeptTakes } from './kept-takes.js';
import type { OwnChecks } from './own-checks.js';
import { DOCUMENTED_RETRY_AFTER_MS } from './poll-timing.js';
import type { RunObserver } from './run-observer.js';
import { type ItemChange, RunState } from './run-state.js';
import type { SizeGuess } from './save-estimate.js';
import { SharedWork } from './shared-runners.js';
import {
  type DiskRefuses,
  formatDuration,
  outageReportDue,
  type StopLoss,
  type StopReason,
  stopLoss,
} from './stop-rules.js';
import { UnsavedBound } from './unsaved.js';

export interface RunOptions {
  /** --poll-interval: taken in place of the service's Retry-After; null: learn it, else 10 s. */
  pollIntervalMs: number | null;
  /** The account as the pre-flight just read it, if it answered. */
  account?: Account | null;
  regenerateExpired: boolean;
  downloadConcurrency: number;
  /** The most outputs paid for and not yet saved at once; null: twice the slot limit (unsaved.ts). */
  maxUnsaved?: number | null;
  /** Workspace limit when GET /account cannot tell (the service's documented default). */
  defaultSlotLimit: number;
  /** Longest wait for response headers or the next body chunk of a download. */
  downloadTimeoutMs?: number;
  /** Done items to generate a new take of, preserving the earlier one (run --redo). */
  redo?: readonly string[];
  /** Wait before resubmitting a model_busy job; MODEL_BUSY_DELAY_MS unless a test harness shortens it. */
  modelBusyDelayMs?: number;
  /** `--only`: the items this run may touch; null for all. */
  only?: ReadonlySet<string> | null;
  /** `--retry-failed`: items failed for a final reason go out again with a new key. */
  retryFailed?: boolean;
  /** The pre-run check found only the guessed output size too large: start one job at a time. */
  sizeGuess?: SizeGuess | null;
  /**
   * A shared batch's definition as this run started on it (docs/shared-ledger.md): its revision,
   * which every admission compares, and where the batch's words name it.
   */
  definition?: { revision: number; ledger: string } | null;
  /** The checks of your own each saved take is given (docs/checks.md); absent: none. */
  ownChecks?: OwnChecks;
}

export interface RunDeps {
  client: MediaGenClient;
  /** The ledger's roles a run uses: its writes, its rows, the takes it reuses, a shared batch's claims. */
  ledger: RunLedger & RecordReads & TakeLedger & SharedLedger & Pick<LedgerLifecycle, 'path'>;
  manifest: Manifest;
  clock: Clock;
  random: () => number;
  observer: RunObserver;
  /** Where the outputs go: the output folder, or an s3:// location. */
  store: OutputStore;
  /** Told each time a new reason to stop takes effect (the run's notifications send it on). */
  onStop?: (reason: StopReason, message: string) => void;
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
  /** What this run's checks of saved takes came to (docs/checks.md). */
  readonly checks = new CheckTally();
  /** The requests moderation rejected, the ledger's and this run's (fallback.ts); read by restore. */
  rejections = new Rejections([]);
  /** The bound on outputs paid for and not yet saved (unsaved.ts). */
  readonly unsaved: UnsavedBound;
  /** This run's share of a batch that several runners work (a shared ledger); null for a ledger of its own. */
  readonly shared: SharedWork | null;
  #fatal: unknown = null;
  /** The background tasks not yet settled: a failed run waits for them before it gives its result. */
  readonly #pending = new Set<Promise<void>>();
  #kept: Promise<KeptTakes> | null = null;
  /** Items asking for the very request another item of this run submits (twins.ts). */
  readonly #twins: ManifestItem[] = [];
  readonly #lostCopies = new Set<string>();
  /** Lost takes of the item's own job (not copies), with why they would be expired. */
  readonly #lostOwn = new Map<string, string>();
  /** Ends the loop's current sleep; null while it is not sleeping. */
  #wakeSleeper: (() => void) | null = null;
  readonly #stopped = new AbortController();

  constructor(deps: RunDeps, options: RunOptions, downloads: (context: RunContext) => DownloadQueue) {
    this.deps = deps;
    this.options = options;
    this.state = new RunState(deps.manifest.concurrency ?? options.defaultSlotLimit);
    this.shared = deps.ledger.claims ? new SharedWork(deps.ledger.claims) : null;
    this.unsaved = new UnsavedBound(options.maxUnsaved);
    this.downloads = downloads(this);
  }

  get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? this.state.retryAfterMs ?? DOCUMENTED_RETRY_AFTER_MS;
  }

  /** Runs a task in the background; a throw ends the run (the loop rethrows it), never unhandled. */
  background(task: Promise<unknown>): void {
    const settled = task.then(
      () => undefined,
      (error: unknown) => {
        this.#fatal ??= error;
        if (!this.#stopped.signal.aborted) this.#stopped.abort();
        this.wake();
      },
    );
    this.#pending.add(settled);
    void settled.finally(() => this.#pending.delete(settled));
  }

  throwIfFatal(): void {
    if (this.#fatal !== null) throw this.#fatal;
  }

  /** Whether a background task failed: the run ends, and nothing more is sent. */
  get failed(): boolean {
    return this.#fatal !== null;
  }

  /**
   * Waits for every background task, so that no request of a failed run outlives its result: a
   * send still queued sends nothing (`failed`), one on the wire gets its answer or its timeout.
   */
  async settleBackground(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Ends the loop's sleep early. A wake while the loop is awake is dropped: it looks at everything before sleeping. */
  wake(): void {
    const sleeper = this.#wakeSleeper;
    this.#wakeSleeper = null;
    sleeper?.();
  }

  /**
   * Sleeps `ms` or until woken. The loop sleeps once per answer: a timer and a callback, because
   * an AbortController per sleep, with the DOMException and AbortError an abort builds (each with
   * a stack), was a twentieth of a 5,000-item run's CPU.
   */
  sleepUntilWoken(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const cancel = this.deps.clock.timer(ms, () => {
        this.#wakeSleeper = null;
        resolve();
      });
      this.#wakeSleeper = () => {
        cancel();
        resolve();
      };
    });
  }

  /**
   * Whether an attempt's take is kept (a run's sidecars say the same as `keep`'s), from the keepers
   * as this run first read them: once per run, not once per file, since a batch's keepers change
   * only through `keep`.
   */
  async keptMark(attempt: AttemptRecord): Promise<boolean | null> {
    this.#kept ??= this.deps.ledger
      .keepers()
      .then((keepers) => new KeptTakes(this.deps.manifest.items, keepers));
    return (await this.#kept).recorded({ itemId: attempt.itemId, take: attempt.take ?? 1 });
  }

  /**
   * An item that waits for the take of its twin, acquired in this run, instead of paying again.
   * `lost`: a take whose file is gone or altered and cannot be fetched again; if no intact take of
   * its request is saved by the end, it is expired rather than sent (lost-copies.ts), or, with
   * `regenerateExpired`, sent. `expiredWords`: for a take of the item's own job, why it is expired.
   */
  awaitTwin(item: ManifestItem, lost = false, expiredWords?: string): void {
    this.#twins.push(item);
    if (lost) this.#lostCopies.add(item.id);
    if (expiredWords !== undefined) this.#lostOwn.set(item.id, expiredWords);
  }

  /** The items waiting for a twin's take, handed over once: the run copies or submits them after. */
  takeTwins(): { twins: ManifestItem[]; lost: Set<string>; lostOwn: Map<string, string> } {
    const lost = new Set(this.#lostCopies);
    const lostOwn = new Map(this.#lostOwn);
    this.#lostCopies.clear();
    this.#lostOwn.clear();
    return { twins: this.#twins.splice(0), lost, lostOwn };
  }

  enqueue(itemId: string, notBefore = 0): void {
    this.state.queue.add(itemId, notBefore);
    this.wake();
  }

  /**
   * Commits an item's new state to the ledger (unless a step already `recorded` it with the change
   * that made it), then to memory, then tells the observer.
   */
  setItem(itemId: string, state: ItemState, change: ItemChange = {}, how: { recorded?: boolean } = {}): void {
    // An item no longer in the manifest (its unanswered attempt was resolved) has no state to keep.
    if (!this.state.item(itemId)) return;
    const { signature, ...update } = change;
    // Not awaited: the ledger runs its steps in call order, and a failed write ends the run.
    if (!how.recorded) this.background(this.deps.ledger.setItemState(itemId, { state, ...update }));
    this.state.changeItem(itemId, state, update);
    const detail = change.errorCode
      ? `${change.errorCode}${change.errorMessage ? `: ${change.errorMessage}` : ''}`
      : null;
    this.deps.observer.itemChanged(itemId, state, detail, this.state.countByState());
    // A settled item's lease is let go at once: the other runners waiting for it need not wait it out.
    if (state !== 'pending' && state !== 'in_flight' && this.shared)
      this.background(this.shared.claims.release([itemId]));
    if (state === 'done' || state === 'failed') {
      const streak = this.state.itemSettled(
        itemId,
        state === 'done' ? null : (signature ?? change.errorCode ?? 'failed'),
      );
      const stop = stopLoss(streak);
      if (stop) this.stopWith(stop, stopLossMessage(stop, this.state.queue.length));
    }
  }

  /** Applies a reason to stop and, when it changes the stop in force, says why. */
  stopWith(reason: StopReason, message: string, level: 'warn' | 'error' = 'error'): void {
    if (this.state.stopWith(reason)) {
      this.deps.observer.log(level, message);
      this.deps.onStop?.(this.state.stop!, message);
    }
    if (!this.#stopped.signal.aborted) this.#stopped.abort();
    this.wake();
  }

  /** A save failed because of the disk: stop submitting, keep watching what is in flight. */
  diskRefused(refusal: DiskRefuses): void {
    this.stopWith(
      refusal,
      `stopping: cannot save files (${refusal.code}): ${refusal.message}. No new submissions; jobs in flight ` +
        'are still watched. Their items stay in flight: re-run once it is fixed to save them (nothing is paid again)',
    );
  }

  /** Aborted once the run stops for any reason: waits between resends end early. */
  get stopSignal(): AbortSignal {
    return this.#stopped.signal;
  }

  /**
   * A request got no answer (or the service failed as a whole): one line when the outage starts
   * and one a minute while it lasts, instead of a warning per request.
   */
  serviceUnanswered(reason: string): void {
    const now = this.deps.clock.now();
    const since = this.state.outage.noAnswer(now);
    if (!outageReportDue(this.state.outage.reportedAt, now)) return;
    this.state.outage.reported(now);
    this.deps.observer.log(
      'warn',
      since === now
        ? `no answer from the service (${reason}); retrying, unanswered requests with the same key`
        : `service unreachable for ${formatDuration(now - since)}, retrying (${reason})`,
    );
  }

  /** The service answered: ends an outage, if there was one, with one line. */
  serviceAnswered(): void {
    const lasted = this.state.outage.answered(this.deps.clock.now());
    if (lasted !== null)
      this.deps.observer.log('info', `the service answers again, after ${formatDuration(lasted)}`);
  }

  async budgetState(): Promise<BudgetState> {
    // Without a budget nothing reads spent or reserved, and summing the ledger per item is quadratic.
    if (this.deps.manifest.budgetMicros === null)
      return { budgetMicros: null, spentMicros: 0, reservedMicros: 0 };
    const totals = await this.deps.ledger.moneyTotals();
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

function stopLossMessage(stop: StopLoss, queued: number): string {
  return (
    `stopping: ${stop.items.length} items in a row failed with ${stop.signature} (${stop.items.join(', ')}); ` +
    `the ${queued} item(s) not yet submitted stay pending. Fix the cause and re-run`
  );
}
