import type { AttemptRecord, ItemRecord, ItemState } from '../ledger/records.js';
import type { ManifestItem } from '../manifest/index.js';
import { combineStops, extendStreak, type FailureStreak, NO_STREAK, type StopReason } from './stop-rules.js';

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
 * through its own methods; the loop around it writes the ledger and talks to the service.
 */
export class RunState {
  readonly #items = new Map<string, TrackedItem>();
  /** Items waiting to be submitted, with the earliest time each may go. */
  #queue: Array<{ itemId: string; notBefore: number }> = [];
  readonly #watching = new Map<string, WatchedJob>();
  #postsInFlight = 0;
  #slotLimit: number;
  #stop: StopReason | null = null;
  #retryAfterMs: number | null = null;
  #watchRefused = false;
  #gateUntil = 0;
  #streak: FailureStreak = NO_STREAK;
  #outageSince: number | null = null;
  #outageReportedAt: number | null = null;
  /** Attempts prepared by this run whose every answer so far was a 429: no job exists for them. */
  readonly #onlyRefused = new Set<number>();
  /** Done items this run generates a new take of (run --redo), until that take's first attempt. */
  readonly #redo = new Set<string>();
  /** How long this batch's succeeded jobs took, newest last: it times the next look. */
  readonly #durationsMs: number[] = [];

  constructor(slotLimit: number) {
    this.#slotLimit = slotLimit;
  }

  // Items -----------------------------------------------------------------------------------

  track(item: ManifestItem, hash: string, record: ItemRecord, latest: AttemptRecord | undefined): void {
    this.#items.set(item.id, { item, hash, record, latest, refusedCapMicros: null });
  }

  /** The next attempt of this item starts a new take. */
  redo(itemId: string): void {
    this.#redo.add(itemId);
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

  countByState(): Record<ItemState, number> {
    const counts = { pending: 0, in_flight: 0, done: 0, failed: 0, budget_exceeded: 0, expired: 0 };
    for (const tracked of this.#items.values()) counts[tracked.record.state] += 1;
    return counts;
  }

  /** Records a new state in memory; returns false for an item no longer in the manifest. */
  changeItem(itemId: string, state: ItemState, change: ItemChange): boolean {
    const tracked = this.#items.get(itemId);
    if (!tracked) return false;
    this.#items.set(itemId, {
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
    this.#items.set(attempt.itemId, {
      ...tracked,
      latest: attempt,
      record: { ...tracked.record, state: 'in_flight' },
    });
  }

  capRefused(itemId: string, capMicros: number): void {
    const tracked = this.#items.get(itemId);
    if (!tracked) return;
    this.#items.set(itemId, {
      ...tracked,
      refusedCapMicros: Math.max(tracked.refusedCapMicros ?? 0, capMicros),
    });
  }

  // Queue -----------------------------------------------------------------------------------

  enqueue(itemId: string, notBefore = 0): void {
    this.#queue.push({ itemId, notBefore });
  }

  get queueLength(): number {
    return this.#queue.length;
  }

  /** Queued items whose delay has passed, oldest first. */
  readyItems(now: number): string[] {
    return this.#queue.filter((entry) => entry.notBefore <= now).map((entry) => entry.itemId);
  }

  dequeue(itemId: string): void {
    const index = this.#queue.findIndex((entry) => entry.itemId === itemId);
    if (index >= 0) this.#queue.splice(index, 1);
  }

  /** Time until a queued item's delay or the 429 gate ends. */
  nextQueueDelay(now: number): number {
    let soonest = Number.POSITIVE_INFINITY;
    for (const entry of this.#queue)
      if (entry.notBefore > now) soonest = Math.min(soonest, entry.notBefore - now);
    if (this.#gateUntil > now) soonest = Math.min(soonest, this.#gateUntil - now);
    return soonest;
  }

  /** After a 429 no submission goes out before `until`. */
  closeGate(until: number): void {
    this.#gateUntil = Math.max(this.#gateUntil, until);
  }

  gateOpen(now: number): boolean {
    return now >= this.#gateUntil;
  }

  // Slots -----------------------------------------------------------------------------------

  get slotLimit(): number {
    return this.#slotLimit;
  }

  setSlotLimit(limit: number): void {
    this.#slotLimit = Math.max(1, limit);
  }

  /** This batch's unanswered POSTs and unfinished jobs: what holds the service's slots. */
  get unfinished(): number {
    return this.#postsInFlight + this.#watching.size;
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

  // Outages ---------------------------------------------------------------------------------

  /** Since when the service has not answered (ms), or null while it answers. */
  get outageSince(): number | null {
    return this.#outageSince;
  }

  /** A request went unanswered at `now`; returns since when the outage has lasted. */
  noAnswer(now: number): number {
    this.#outageSince ??= now;
    return this.#outageSince;
  }

  /** The service answered: returns how long it had been unreachable, or null if it was not. */
  answered(now: number): number | null {
    if (this.#outageSince === null) return null;
    const lasted = now - this.#outageSince;
    this.#outageSince = null;
    this.#outageReportedAt = null;
    return lasted;
  }

  get outageReportedAt(): number | null {
    return this.#outageReportedAt;
  }

  outageReported(now: number): void {
    this.#outageReportedAt = now;
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
    return this.unfinished === 0 && (this.#stop !== null || this.#queue.length === 0);
  }
}
