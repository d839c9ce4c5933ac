/**
 * What the run has spent of its look budget (look-limits.ts): its requests of the last minute, for
 * the window limit, and its polls (list pages and job GETs) against what a per-job poller would
 * send for the jobs that have ended. A part of the run state, changed only through its methods.
 */
export class LookBudget {
  /** Request times, oldest first; only the newest few matter for a window of one Retry-After. */
  readonly #sent: number[] = [];
  #polls = 0;
  #earnedByEnded = 0;

  /** A request went out at `at`; `poll` when it is a look (a list page or a job GET). */
  sent(at: number, poll: boolean): void {
    this.#sent.push(at);
    // One time comes in per call, so at most one goes.
    if (this.#sent.length > SENT_KEPT) this.#sent.shift();
    if (poll) this.#polls += 1;
  }

  /** A followed job ended: a per-job poller would have polled it `polls` times. */
  jobEnded(polls: number): void {
    this.#earnedByEnded += polls;
  }

  /** The requests sent after `since`, oldest first. */
  sentSince(since: number): number[] {
    return this.#sent.filter((at) => at > since);
  }

  get polls(): number {
    return this.#polls;
  }

  get earnedByEnded(): number {
    return this.#earnedByEnded;
  }
}

/** Far more than any window cap (slots + 3) allows in one Retry-After. */
const SENT_KEPT = 4096;
