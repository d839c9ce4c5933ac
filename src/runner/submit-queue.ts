/**
 * The items of one run waiting to be submitted, each with the earliest time it may go, and the
 * gate a 429 closes on every submission for its Retry-After. No I/O; changed only through its
 * own methods (it is part of RunState).
 */
export class SubmitQueue {
  /**
   * Each waiting item and the time it may go (0: at once), in the order added: a Map, so that
   * taking an item out is not a walk of the queue (100,000 items were 100,000 walks).
   */
  readonly #entries = new Map<string, number>();
  /** The entries whose time was still to come when last looked at: the only ones nextDelay reads. */
  readonly #delayed = new Map<string, number>();
  #gateUntil = 0;
  readonly #heldBack = new Set<string>();

  /** Queues an item, or moves one already queued to the end with its new time. */
  add(itemId: string, notBefore = 0): void {
    this.remove(itemId);
    this.#entries.set(itemId, notBefore);
    if (notBefore > 0) this.#delayed.set(itemId, notBefore);
  }

  /** An item this run never submits: a file the ledger did not write holds its name (names-in-the-way.ts). */
  holdBack(itemId: string): void {
    this.#heldBack.add(itemId);
  }

  get heldBack(): ReadonlySet<string> {
    return this.#heldBack;
  }

  get length(): number {
    return this.#entries.size;
  }

  /**
   * Queued items whose delay has passed, oldest first, read as they are taken: a caller that
   * stops after a few reads no further, and one may remove the item it was given.
   */
  *ready(now: number): Generator<string> {
    for (const [itemId, notBefore] of this.#entries) {
      if (notBefore > now) continue;
      this.#delayed.delete(itemId);
      yield itemId;
    }
  }

  /** Whether any queued item may go at `now`. */
  hasReady(now: number): boolean {
    return !this.ready(now).next().done;
  }

  remove(itemId: string): void {
    this.#entries.delete(itemId);
    this.#delayed.delete(itemId);
  }

  /** Time until a queued item's delay or the 429 gate ends. */
  nextDelay(now: number): number {
    let soonest = Number.POSITIVE_INFINITY;
    for (const [itemId, notBefore] of this.#delayed) {
      if (notBefore > now) soonest = Math.min(soonest, notBefore - now);
      else this.#delayed.delete(itemId);
    }
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
}
