/**
 * Whether the service is answering this run, since when it has not, and when that was last told:
 * one line when an outage starts and one a minute while it lasts (RunContext.serviceUnanswered).
 * No I/O; changed only through its own methods (it is part of RunState).
 */
export class OutageState {
  #since: number | null = null;
  #reportedAt: number | null = null;

  /** Since when the service has not answered (ms), or null while it answers. */
  get since(): number | null {
    return this.#since;
  }

  /** A request went unanswered at `now`; returns since when the outage has lasted. */
  noAnswer(now: number): number {
    this.#since ??= now;
    return this.#since;
  }

  /** The service answered: returns how long it had been unreachable, or null if it was not. */
  answered(now: number): number | null {
    if (this.#since === null) return null;
    const lasted = now - this.#since;
    this.#since = null;
    this.#reportedAt = null;
    return lasted;
  }

  get reportedAt(): number | null {
    return this.#reportedAt;
  }

  reported(now: number): void {
    this.#reportedAt = now;
  }
}
