/**
 * The items of one run waiting to be submitted, each with the earliest time it may go, and the
 * gate a 429 closes on every submission for its Retry-After. No I/O; changed only through its
 * own methods (it is part of RunState).
 */
export class SubmitQueue {
  #entries: Array<{ itemId: string; notBefore: number }> = [];
  #gateUntil = 0;
  readonly #heldBack = new Set<string>();

  add(itemId: string, notBefore = 0): void {
    this.#entries.push({ itemId, notBefore });
  }

  /** An item this run never submits: a file the ledger did not write holds its name (names-in-the-way.ts). */
  holdBack(itemId: string): void {
    this.#heldBack.add(itemId);
  }

  get heldBack(): ReadonlySet<string> {
    return this.#heldBack;
  }

  get length(): number {
    return this.#entries.length;
  }

  /** Queued items whose delay has passed, oldest first. */
  ready(now: number): string[] {
    return this.#entries.filter((entry) => entry.notBefore <= now).map((entry) => entry.itemId);
  }

  remove(itemId: string): void {
    const index = this.#entries.findIndex((entry) => entry.itemId === itemId);
    if (index >= 0) this.#entries.splice(index, 1);
  }

  /** Time until a queued item's delay or the 429 gate ends. */
  nextDelay(now: number): number {
    let soonest = Number.POSITIVE_INFINITY;
    for (const entry of this.#entries)
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
}
