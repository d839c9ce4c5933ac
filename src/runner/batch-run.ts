import pLimit from 'p-limit';
import type { MediaGenClient } from '../api/client.js';
import type { Job } from '../api/schemas.js';
import type { Ledger } from '../ledger/ledger.js';
import type { AttemptRecord, ItemRecord, ItemState } from '../ledger/records.js';
import type { Manifest, ManifestItem } from '../manifest/index.js';
import { parseUsd } from '../money.js';
import { type BudgetState, reserveBudget } from './budget.js';
import type { Clock } from './clock.js';
import { type DownloadTask, JobDownloads } from './job-downloads.js';
import { failureCode, jobSnapshot } from './job-snapshot.js';
import { decideJobFailure, decideSubmitError, refusalSettlesAttempt } from './policy.js';
import type { RunReporter } from './reporter.js';
import { buildRequestBody, newIdempotencyKey } from './request.js';

export interface RunOptions {
  /** Fixed poll interval; null means the service's last Retry-After, else 10 s. */
  pollIntervalMs: number | null;
  regenerateExpired: boolean;
  downloadConcurrency: number;
  /** Workspace limit when GET /account cannot tell (the spec's default). */
  defaultSlotLimit: number;
  /** Longest wait for response headers or the next body chunk of a download. */
  downloadTimeoutMs?: number;
}

export interface RunDeps {
  client: MediaGenClient;
  ledger: Ledger;
  manifest: Manifest;
  clock: Clock;
  random: () => number;
  reporter: RunReporter;
}

export type StopReason = { kind: 'account_refused'; code: string; message: string } | { kind: 'draining' };

interface Tracked {
  item: ManifestItem;
  hash: string;
  record: ItemRecord;
  latest: AttemptRecord | undefined;
  /** The largest budget-derived max_cost_usd the service refused for this item in this run. */
  refusedCapMicros?: number;
}

/**
 * One `mediabatch run`: keeps at most min(concurrency, account limit) of this batch's jobs
 * unfinished, watches them through the job list, and saves their files. Every step is committed
 * to the ledger before the next one depends on it, so a kill at any moment can be resumed.
 */
export class BatchRun {
  readonly deps: RunDeps;
  readonly options: RunOptions;
  readonly items = new Map<string, Tracked>();
  /** Items waiting to be submitted, with the earliest time they may go. */
  readonly queue: Array<{ itemId: string; notBefore: number }> = [];
  /** Accepted jobs not yet final: job id -> attempt. */
  readonly watching = new Map<string, { attempt: AttemptRecord; acceptedAt: number }>();
  postsInFlight = 0;
  slotLimit: number;
  stop: StopReason | null = null;
  lastRetryAfterMs: number | null = null;
  /** The service refused our key while watching: nothing more can be learnt this run. */
  watchRefused = false;
  /** What ended a background task with a throw (the ledger cannot be written): the run ends with it. */
  fatal: unknown = null;
  readonly downloads: JobDownloads;
  #gateUntil = 0;
  #wake = new AbortController();
  readonly #postLimit = pLimit(64);
  /** Attempts prepared by this run whose every answer so far was a 429: no job exists for them. */
  readonly #onlyRefused = new Set<number>();

  constructor(deps: RunDeps, options: RunOptions) {
    this.deps = deps;
    this.options = options;
    this.slotLimit = deps.manifest.concurrency ?? options.defaultSlotLimit;
    this.downloads = new JobDownloads(this, options.downloadConcurrency);
  }

  get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? this.lastRetryAfterMs ?? 10_000;
  }

  get unfinished(): number {
    return this.postsInFlight + this.watching.size;
  }

  track(item: ManifestItem, hash: string, record: ItemRecord, latest: AttemptRecord | undefined): void {
    this.items.set(item.id, { item, hash, record, latest });
  }

  enqueue(itemId: string, notBefore = 0): void {
    this.queue.push({ itemId, notBefore });
    this.wake();
  }

  /** Runs a task in the background; a throw ends the run (runBatch rethrows it) instead of going unhandled. */
  background(task: Promise<unknown>): void {
    task.catch((error: unknown) => {
      this.fatal ??= error;
      this.wake();
    });
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

  setItem(
    itemId: string,
    state: ItemState,
    extra: { errorCode?: string | null; errorMessage?: string | null; retriesUsed?: number } = {},
  ): void {
    const tracked = this.items.get(itemId);
    // An item no longer in the manifest (its unanswered attempt was resolved) has no state to keep.
    if (!tracked) return;
    this.deps.ledger.setItemState(itemId, { state, ...extra });
    tracked.record = {
      ...tracked.record,
      state,
      errorCode: extra.errorCode ?? null,
      errorMessage: extra.errorMessage ?? null,
      retriesUsed: extra.retriesUsed ?? tracked.record.retriesUsed,
    };
    const detail = extra.errorCode
      ? `${extra.errorCode}${extra.errorMessage ? `: ${extra.errorMessage}` : ''}`
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
      spentMicros: totals.chargedMicros - totals.refundedMicros,
      reservedMicros: totals.reservedMicros,
    };
  }

  /** Without its own cap under a budget, an item's max_cost_usd is what was left of the budget. */
  capComesFromBudget(itemId: string): boolean {
    return this.deps.manifest.budgetMicros !== null && this.items.get(itemId)?.item.maxCostMicros === null;
  }

  /** Starts as many submissions as free slots, budget and gates allow. */
  fillSlots(): void {
    if (this.stop) return;
    const now = this.deps.clock.now();
    if (now < this.#gateUntil) return;
    for (let i = 0; i < this.queue.length && this.unfinished < this.slotLimit; ) {
      const entry = this.queue[i]!;
      if (entry.notBefore > now) {
        i += 1;
        continue;
      }
      const tracked = this.items.get(entry.itemId)!;
      const reservation = reserveBudget(
        this.budgetState(),
        tracked.item.maxCostMicros,
        tracked.refusedCapMicros ?? null,
      );
      if (reservation.kind === 'no_room') {
        // Refunds and unanswered reservations may still free room; decide only when nothing can change.
        if (this.unfinished === 0) {
          this.queue.splice(i, 1);
          this.setItem(entry.itemId, 'budget_exceeded', {
            errorCode: 'budget_exceeded',
            errorMessage: 'does not fit in what is left of budget_usd',
          });
          continue;
        }
        i += 1;
        continue;
      }
      this.queue.splice(i, 1);
      this.#startAttempt(
        tracked,
        reservation.reserveMicros,
        reservation.maxCostMicros,
        reservation.capFromBudget,
      );
    }
  }

  /**
   * Time until a queued item's delay or the 429 gate ends, for the loop's sleep. Items that are
   * ready but blocked by slots or budget wait for a wake-up instead: an answer, a final job or a
   * saved file is what frees them.
   */
  nextQueueDelay(): number {
    const now = this.deps.clock.now();
    let soonest = Number.POSITIVE_INFINITY;
    for (const entry of this.queue)
      if (entry.notBefore > now) soonest = Math.min(soonest, entry.notBefore - now);
    if (this.#gateUntil > now) soonest = Math.min(soonest, this.#gateUntil - now);
    return soonest;
  }

  #startAttempt(
    tracked: Tracked,
    reserveMicros: number,
    maxCostMicros: number | null,
    capFromBudget: boolean,
  ): void {
    const { manifest, ledger } = this.deps;
    const seq = (tracked.latest?.seq ?? 0) + 1;
    const attempt = ledger.prepareAttempt({
      itemId: tracked.item.id,
      seq,
      idempotencyKey: newIdempotencyKey(),
      requestBody: buildRequestBody(manifest.name, tracked.item, seq, maxCostMicros),
      requestHash: tracked.hash,
      reservedMicros: reserveMicros,
    });
    tracked.latest = attempt;
    tracked.record = { ...tracked.record, state: 'in_flight' };
    this.deps.reporter.itemChanged(tracked.item.id, 'in_flight', null);
    this.#onlyRefused.add(attempt.id);
    this.background(this.sendAttempt(attempt, capFromBudget));
  }

  /**
   * Sends a committed attempt until the service gives an answer that decides it. The same key and
   * body go out every time, so a job stored behind a 500 or a dropped connection is replayed, not
   * paid twice.
   */
  async sendAttempt(attempt: AttemptRecord, capFromBudget: boolean): Promise<void> {
    this.postsInFlight += 1;
    try {
      await this.#postLimit(() => this.#sendUntilDecided(attempt, capFromBudget));
    } finally {
      this.#onlyRefused.delete(attempt.id);
      this.postsInFlight -= 1;
      this.wake();
    }
  }

  async #sendUntilDecided(attempt: AttemptRecord, capFromBudget: boolean): Promise<void> {
    const { client, ledger, clock, random, reporter } = this.deps;
    for (let failures = 0; ; ) {
      let job: Job;
      try {
        const answer = await client.createVideoJob(attempt.requestBody, attempt.idempotencyKey);
        job = answer.data;
        this.#learnRetryAfter(answer.retryAfter);
        const accepted = ledger.recordAccepted(attempt.id, answer.status, jobSnapshot(job));
        this.handleJob(accepted, job);
        return;
      } catch (error) {
        const decision = decideSubmitError(error, failures, random, this.pollIntervalMs);
        if (decision.kind === 'resend') {
          failures += decision.slotsBusy ? 0 : 1;
          if (!decision.slotsBusy) this.#onlyRefused.delete(attempt.id);
          if (decision.slotsBusy) this.#gateUntil = Math.max(this.#gateUntil, clock.now() + decision.delayMs);
          else
            reporter.log(
              'warn',
              `${attempt.itemId}: no answer to submission (${decision.reason}); resending the same request`,
            );
          if (decision.slotsBusy && this.#dropWhenStopping(attempt, error)) return;
          await clock.sleep(decision.delayMs);
          if (decision.slotsBusy && this.#dropWhenStopping(attempt, error)) return;
          continue;
        }
        // Only an attempt whose every earlier send was answered (429s) is settled by a 401/402.
        const settled = refusalSettlesAttempt(decision, !this.#onlyRefused.has(attempt.id));
        if (settled)
          ledger.recordRejected(
            attempt.id,
            (error as { status: number }).status,
            decision.code,
            decision.message,
          );
        if (decision.kind === 'account_refused') {
          if (settled) this.setItem(attempt.itemId, 'pending');
          if (this.stop?.kind !== 'account_refused') {
            this.stop = { kind: 'account_refused', code: decision.code, message: decision.message };
            reporter.log(
              'error',
              `the service refused the account (${decision.message}); no new submissions`,
            );
          }
          return;
        }
        if (decision.code === 'max_cost_exceeded' && capFromBudget) {
          // The cap was what was left of the budget, so the job simply does not fit (yet): it waits
          // until more than that cap is left (a refund), else ends budget_exceeded, never resending
          // the same refused request in a loop.
          const tracked = this.items.get(attempt.itemId)!;
          const refused = parseUsd(String(JSON.parse(attempt.requestBody).max_cost_usd ?? '')) ?? 0;
          tracked.refusedCapMicros = Math.max(tracked.refusedCapMicros ?? 0, refused);
          this.enqueue(attempt.itemId);
          this.setItem(attempt.itemId, 'pending');
          return;
        }
        this.setItem(attempt.itemId, 'failed', { errorCode: decision.code, errorMessage: decision.message });
        if (decision.code === 'idempotency_key_reused')
          reporter.log('error', `${attempt.itemId}: ${decision.message}`);
        return;
      }
    }
  }

  /**
   * A stopping run does not wait for a slot to submit new work: an attempt of this run answered
   * only with 429 has no job (a 429 creates none), so it is closed as refused and its item stays
   * pending for the next run.
   */
  #dropWhenStopping(attempt: AttemptRecord, error: unknown): boolean {
    if (!this.stop || !this.#onlyRefused.has(attempt.id)) return false;
    const refusal = error as { code?: string | null; message?: string };
    this.deps.ledger.recordRejected(
      attempt.id,
      429,
      refusal.code ?? 'concurrency_limited',
      refusal.message ?? 'no free slot',
    );
    this.setItem(attempt.itemId, 'pending');
    return true;
  }

  #learnRetryAfter(seconds: number | null): void {
    if (seconds !== null) this.lastRetryAfterMs = Math.max(0, seconds * 1000);
  }

  /** Acts on the latest known state of an accepted job. */
  handleJob(attempt: AttemptRecord, job: Job, retryAfterSeconds: number | null = null): void {
    this.#learnRetryAfter(retryAfterSeconds);
    const tracked = this.items.get(attempt.itemId);
    if (!tracked) return;
    const stale = attempt.requestHash !== tracked.hash;
    if (job.status === 'queued' || job.status === 'running') {
      if (!this.watching.has(job.id))
        this.watching.set(job.id, { attempt, acceptedAt: this.deps.clock.now() });
      return;
    }
    this.watching.delete(job.id);
    if (stale) {
      // Resolved an attempt from before the manifest changed: its result answers an old request.
      this.enqueue(attempt.itemId);
      return;
    }
    if (job.status === 'succeeded') {
      this.downloads.add({ attempt, job });
      return;
    }
    this.#jobFailed(attempt, job);
  }

  #jobFailed(attempt: AttemptRecord, job: Job): void {
    const tracked = this.items.get(attempt.itemId)!;
    const code = failureCode(job);
    const decision = decideJobFailure(
      code,
      tracked.record.retriesUsed,
      this.deps.manifest.retries,
      this.pollIntervalMs,
    );
    if (decision.kind === 'resubmit') {
      this.setItem(attempt.itemId, 'pending', {
        retriesUsed: tracked.record.retriesUsed + 1,
        errorCode: code,
      });
      this.enqueue(attempt.itemId, this.deps.clock.now() + decision.delayMs);
      return;
    }
    const message =
      decision.code === 'retries_exhausted'
        ? `gave up after ${tracked.record.retriesUsed + 1} attempts; last failure ${code}: ${job.error?.message ?? ''}`
        : (job.error?.message ?? job.status);
    this.setItem(attempt.itemId, 'failed', { errorCode: decision.code, errorMessage: message });
  }

  /** Called by downloads when an item's files are all saved or its outputs are gone. */
  downloadFinished(task: DownloadTask, outcome: 'saved' | 'expired' | { error: string }): void {
    const itemId = task.attempt.itemId;
    if (outcome === 'saved') this.setItem(itemId, 'done');
    else if (outcome === 'expired') {
      if (this.options.regenerateExpired && !this.stop) this.enqueue(itemId);
      else
        this.setItem(itemId, 'expired', {
          errorCode: 'expired',
          errorMessage: 'outputs were deleted before they were saved',
        });
    } else {
      this.deps.reporter.log('error', `${itemId}: files not saved: ${outcome.error}; re-run to retry`);
    }
    this.wake();
  }

  /** True when nothing is in flight and nothing more will be submitted. */
  isSettled(): boolean {
    if (this.unfinished > 0 || !this.downloads.idle) return false;
    return this.stop !== null || this.queue.length === 0;
  }
}
