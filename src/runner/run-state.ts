import { type AttemptRecord, type ItemRecord, type ItemState, zeroCounts } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import { LookBudget } from './look-budget.js';
import { OutageState } from './outage-state.js';
import { OutputSizing } from './output-sizing.js';
import { combineStops, extendStreak, type FailureStreak, NO_STREAK, type StopReason } from './stop-rules.js';
import { SubmitQueue } from './submit-queue.js';
import { UnsentItems } from './unsent-items.js';

/** One manifest item as this run knows it. */
export interface TrackedItem {
  readonly item: ManifestItem;
  readonly hash: string;
  readonly record: ItemRecord;
  readonly latest: AttemptRecord | undefined;
  /** The largest budget-derived max_cost_usd the service refused for this item in this run. */
  readonly refusedCapMicros: number | null;
}

/** An accepted job that is not final yet. */
export interface WatchedJob {
  readonly attempt: AttemptRecord;
  /** When this run learnt of it; a job accepted after a listing began may be missing from it. */
  readonly acceptedAt: number;
  /** The service's created_at of the job, when this run has seen it: where a listing may start. */
  readonly createdAt: string | null;
}

export interface ItemChange {
  errorCode?: string | null;
  errorMessage?: string | null;
  retriesUsed?: number;
  /** What the stop-loss compares for a failed item when it differs from errorCode (the field named). */
  signature?: string;
}

/**
 * The in-memory state of one run: what each item is, what waits to be submitted, which jobs are
 * watched, how many slots are taken, and why the run stops. It does no I/O and changes only
 * through its own methods; the loop around it writes the ledger and talks to the service. The
 * submission queue, the outage record and the output sizing are parts of it with their own files
 * and methods, held in read-only fields so that no caller can replace them.
 */
export class RunState {
  /** Items waiting to be submitted, and the 429 gate (submit-queue.ts). */
  readonly queue = new SubmitQueue();
  /** Whether the service answers (outage-state.ts). */
  readonly outage = new OutageState();
  /** Whether an output's size is known, or the run goes one job at a time (output-sizing.ts). */
  readonly sizing = new OutputSizing();
  /** Items sent only on request, their ledger rows left as they were until sent (unsent-items.ts). */
  readonly unsent = new UnsentItems();
  readonly #items = new Map<string, TrackedItem>();
  /** Items per state, kept with every change: an event and the counts beside it come from one change. */
  readonly #counts: Record<ItemState, number> = zeroCounts();
  readonly #watching = new Map<string, WatchedJob>();
  #postsInFlight = 0;
  #slotLimit: number;
  #stop: StopReason | null = null;
  #retryAfterMs: number | null = null;
  #watchRefused = false;
  #streak: FailureStreak = NO_STREAK;
  /** Attempts prepared by this run whose every answer so far was a 429: no job exists for them. */
  readonly #onlyRefused = new Set<number>();
  /** Done items this run generates a new take of (run --redo), until that take's first attempt. */
  readonly #redo = new Set<string>();
  /** Saved items fetched again because a file was gone ('missing') or not as saved ('altered'). */
  readonly #unfitSaved = new Map<string, 'missing' | 'altered'>();
  /** How long this batch's succeeded jobs took, newest last: it times the next look. */
  readonly #durationsMs: number[] = [];
  #lastLookAt: number | null = null;
  /** The requests and polls this run has spent against its look budget (look-budget.ts). */
  readonly budget = new LookBudget();

  constructor(slotLimit: number) {
    this.#slotLimit = slotLimit;
  }

  // Items -----------------------------------------------------------------------------------

  track(item: ManifestItem, hash: string, record: ItemRecord, latest: AttemptRecord | undefined): void {
    this.#put(item.id, { item, hash, record, latest, refusedCapMicros: null });
  }

  /** Another runner finished this item (its record says so): done here too, as this run knew it otherwise. */
  settledElsewhere(itemId: string, record: ItemRecord): void {
    const tracked = this.#items.get(itemId);
    if (tracked) this.#put(itemId, { ...tracked, record });
  }

  /** Every change of an item goes through here, so the counts by state never drift from the items. */
  #put(itemId: string, tracked: TrackedItem): void {
    const before = this.#items.get(itemId);
    if (before) this.#counts[before.record.state] -= 1;
    this.#counts[tracked.record.state] += 1;
    this.#items.set(itemId, tracked);
  }

  /** The next attempt of this item starts a new take. */
  redo(itemId: string): void {
    this.#redo.add(itemId);
  }

  /** A saved item is fetched again: what became of its file, for the words if it is gone for good. */
  savedFileUnfit(itemId: string, state: 'missing' | 'altered'): void {
    this.#unfitSaved.set(itemId, state);
  }

  unfitSaved(itemId: string): 'missing' | 'altered' | undefined {
    return this.#unfitSaved.get(itemId);
  }

  /** Drops a redo that will not be sent (it does not fit the budget); true if there was one. */
  cancelRedo(itemId: string): boolean {
    return this.#redo.delete(itemId);
  }

  /** The take a new attempt of this item makes: the next one for a redo, else its current one. */
  takeForNewAttempt(itemId: string): number {
    const current = this.#items.get(itemId)?.latest?.take ?? 1;
    if (!this.#redo.delete(itemId)) return current;
    return current + 1;
  }

  item(itemId: string): TrackedItem | undefined {
    return this.#items.get(itemId);
  }

  get itemCount(): number {
    return this.#items.size;
  }

  /** A copy of the items per state as they are now (kept as items change, not counted on demand). */
  countByState(): Record<ItemState, number> {
    return { ...this.#counts };
  }

  /** Records a new state in memory; returns false for an item no longer in the manifest. */
  changeItem(itemId: string, state: ItemState, change: ItemChange): boolean {
    const tracked = this.#items.get(itemId);
    if (!tracked) return false;
    this.#put(itemId, {
      ...tracked,
      record: {
        ...tracked.record,
        state,
        errorCode: change.errorCode ?? null,
        errorMessage: change.errorMessage ?? null,
        retriesUsed: change.retriesUsed ?? tracked.record.retriesUsed,
      },
    });
    return true;
  }

  /** A new attempt of the item was prepared: it is in flight from now on. */
  attemptPrepared(attempt: AttemptRecord): void {
    const tracked = this.#items.get(attempt.itemId);
    if (!tracked) return;
    // The item now answers the request this attempt sends (prepareAttempts writes the same row).
    this.#put(attempt.itemId, {
      ...tracked,
      hash: attempt.requestHash,
      latest: attempt,
      record: { ...tracked.record, requestHash: attempt.requestHash, state: 'in_flight' },
    });
  }

  capRefused(itemId: string, capMicros: number): void {
    const tracked = this.#items.get(itemId);
    if (!tracked) return;
    this.#put(itemId, {
      ...tracked,
      refusedCapMicros: Math.max(tracked.refusedCapMicros ?? 0, capMicros),
    });
  }

  // Slots -----------------------------------------------------------------------------------

  /** The slots submissions may fill: one while an output's size is only a guess. */
  get slotLimit(): number {
    return this.sizing.known ? this.#slotLimit : 1;
  }

  /** The slots once an output's size is known: what the next wave is judged by. */
  get fullSlotLimit(): number {
    return this.#slotLimit;
  }

  setSlotLimit(limit: number): void {
    this.#slotLimit = Math.max(1, limit);
  }

  /** This batch's unanswered POSTs and unfinished jobs: what holds the service's slots. */
  get unfinished(): number {
    return this.#postsInFlight + this.#watching.size;
  }

  /**
   * How many submissions may start now. While an output's size is a guess, a job holds its one
   * slot until its files are saved (`downloading`: files waiting or being saved), not only until
   * the service finishes it: the saved file is what the run waits to learn from, and the size it
   * tells is judged before the next submission.
   */
  freeSlots(downloading: number, checksUnproven = false): number {
    if (this.sizing.judging) return 0;
    return this.slotLimit - this.unfinished - (this.sizing.known && !checksUnproven ? 0 : downloading);
  }

  get hasFreeSlot(): boolean {
    return this.unfinished < this.#slotLimit;
  }

  postStarted(): void {
    this.#postsInFlight += 1;
  }

  postEnded(): void {
    this.#postsInFlight -= 1;
  }

  /** A fresh attempt of this run: until a send goes unanswered, a 429 proves it created no job. */
  sendsBegan(attemptId: number): void {
    this.#onlyRefused.add(attemptId);
  }

  sendUnanswered(attemptId: number): void {
    this.#onlyRefused.delete(attemptId);
  }

  onlyRefusedSoFar(attemptId: number): boolean {
    return this.#onlyRefused.has(attemptId);
  }

  // Watched jobs ----------------------------------------------------------------------------

  watch(jobId: string, attempt: AttemptRecord, acceptedAt: number, createdAt: string | null = null): void {
    const known = this.#watching.get(jobId);
    this.#watching.set(jobId, {
      attempt,
      acceptedAt: known?.acceptedAt ?? acceptedAt,
      createdAt: createdAt ?? known?.createdAt ?? null,
    });
  }

  jobSucceeded(durationMs: number): void {
    if (Number.isFinite(durationMs) && durationMs >= 0) this.#durationsMs.push(durationMs);
  }

  get durationsMs(): readonly number[] {
    return this.#durationsMs;
  }

  /** A look at the jobs went out at `at`. */
  looked(at: number): void {
    this.#lastLookAt = at;
  }

  get lastLookAt(): number | null {
    return this.#lastLookAt;
  }

  unwatch(jobId: string): void {
    this.#watching.delete(jobId);
  }

  watched(jobId: string): WatchedJob | undefined {
    return this.#watching.get(jobId);
  }

  /** A copy, so the caller may watch and unwatch while it walks. */
  watchedJobs(): Array<[string, WatchedJob]> {
    return [...this.#watching];
  }

  get watchingCount(): number {
    return this.#watching.size;
  }

  /**
   * Followed jobs restored from the ledger that this run has not seen yet: every answer about a job
   * names its created_at, which only a job restored from the ledger is without.
   */
  get unseenCount(): number {
    let unseen = 0;
    for (const entry of this.#watching.values()) if (entry.createdAt === null) unseen += 1;
    return unseen;
  }

  // Stopping and pacing ---------------------------------------------------------------------

  get stop(): StopReason | null {
    return this.#stop;
  }

  /** Applies a reason to stop (see combineStops); true when it changed the stop in force. */
  stopWith(reason: StopReason): boolean {
    const next = combineStops(this.#stop, reason);
    if (next === this.#stop) return false;
    this.#stop = next;
    return true;
  }

  /** Records an item's final outcome for the stop-loss (`failure` null: done); returns the streak. */
  itemSettled(itemId: string, failure: string | null): FailureStreak {
    this.#streak = extendStreak(this.#streak, itemId, failure);
    return this.#streak;
  }

  /** The key was refused while watching: nothing more can be learnt in this run. */
  get watchRefused(): boolean {
    return this.#watchRefused;
  }

  refuseWatching(): void {
    this.#watchRefused = true;
  }

  get retryAfterMs(): number | null {
    return this.#retryAfterMs;
  }

  learnRetryAfter(seconds: number | null): void {
    if (seconds !== null) this.#retryAfterMs = Math.max(0, seconds * 1000);
  }

  /** True when nothing is in flight and nothing more will be submitted (downloads aside). */
  get submissionsSettled(): boolean {
    return this.unfinished === 0 && (this.#stop !== null || this.queue.length === 0);
  }
}
