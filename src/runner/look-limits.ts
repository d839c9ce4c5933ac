/**
 * How many looks the run may spend, and when: never more requests in all than a client polling
 * each job every Retry-After would have sent by then, and never more in any window of one
 * Retry-After than the run's own start sends (docs/performance.md). Pure, over plain numbers (ms
 * on the run's clock).
 */

export interface LookLimitInput {
  now: number;
  /** The previous look at the jobs; null before the first. */
  lastPollAt: number | null;
  retryAfterMs: number;
  /** When each job being followed started. */
  running: readonly { startedAt: number }[];
  /**
   * Looks the run may still send now and stay within the per-job poller's requests so far: what
   * that client would have polled (one GET per job per Retry-After of its life) less the run's own
   * looks and extra requests (lookCredit).
   */
  credit: number;
  /** Items waiting to be submitted: a look that finds jobs finished is followed by their POSTs. */
  queued: number;
  /** This run's API requests (every kind) of the last Retry-After, oldest first (times). */
  recentRequests: readonly number[];
  /** Most requests in any window of one Retry-After (windowCap). */
  windowCap: number;
}

/** Room in the window kept for the POSTs that follow a look which finds jobs finished. */
const POSTS_KEPT_ROOM = 2;
/** However much credit is saved, looks stay at least this share of Retry-After apart. */
const MAX_LOOKS_PER_RETRY_AFTER = 10;

/**
 * Requests a look may still spend, from what a per-job poller would have polled: `pollsEarned` is
 * one per Retry-After of every job's life (as that client polls each job from its start), `looks`
 * the run's looks so far, `extra` its requests beyond the account read, the POSTs and the looks
 * (the new ledger's check for jobs it does not know, the GET that learns Retry-After).
 */
export function lookCredit(pollsEarned: number, looks: number, extra: number): number {
  return pollsEarned - looks - extra;
}

/** The polls a per-job poller sends to a job that took `durationMs`, the one that sees it final included. */
export function pollsFor(durationMs: number, retryAfterMs: number): number {
  return Math.max(1, Math.ceil(durationMs / Math.max(1, retryAfterMs)));
}

/**
 * The polls a per-job poller has sent by `until` to a job followed from `startedAt`: one per
 * Retry-After of its life so far (it polls first one Retry-After after the POST).
 */
export function pollsOver(startedAt: number, until: number, retryAfterMs: number): number {
  return Math.max(0, Math.floor((until - startedAt) / Math.max(1, retryAfterMs)));
}

/**
 * The most requests in a Retry-After: what a per-job poller sends in its busiest window, where the
 * jobs of all its slots finish at one poll (a poll and a POST per slot), and never less than the
 * run's own start (the account read, the new ledger's check, one POST per slot, the GET that
 * learns Retry-After). With three slots both are six.
 */
export function windowCap(slots: number): number {
  const n = Math.max(1, slots);
  return Math.max(2 * n, n + 3);
}

/** The look credit at `at`, counting the polls the running jobs earn until then. */
export function creditAt(input: LookLimitInput, at: number): number {
  let earned = 0;
  for (const job of input.running)
    earned +=
      pollsOver(job.startedAt, at, input.retryAfterMs) -
      pollsOver(job.startedAt, input.now, input.retryAfterMs);
  return input.credit + earned;
}

/** The first moment from `at` on when a look fits in the window of the last Retry-After. */
function windowRoomFrom(input: LookLimitInput, at: number): number {
  const { recentRequests, retryAfterMs } = input;
  // Room is kept for the POSTs a look may set off, as they never wait: two, more than one look
  // finds at once in all but a few draws of the pace simulator.
  const posts = Math.min(input.queued, input.running.length, POSTS_KEPT_ROOM);
  const cap = Math.max(1, input.windowCap - posts);
  const inWindow = recentRequests.filter((sent) => sent > at - retryAfterMs);
  if (inWindow.length < cap) return at;
  // Room once enough of the window's requests have left it.
  return inWindow[inWindow.length - cap]! + retryAfterMs;
}

/** The next moment from `at` on when the running jobs' polls add to the credit. */
function nextEarningAfter(input: LookLimitInput, at: number): number {
  const r = Math.max(1, input.retryAfterMs);
  let next = Number.POSITIVE_INFINITY;
  for (const job of input.running) {
    const due = job.startedAt + (Math.floor((at - job.startedAt) / r) + 1) * r;
    next = Math.min(next, due);
  }
  return next;
}

/**
 * The earliest time from `at` (at least `now`) when a look may go out: credit for it, room in the
 * window, and at least Retry-After / 10 after `lastPollAt`. Infinity when no running job will
 * ever earn the credit.
 */
export function earliestLookAt(input: LookLimitInput, lastPollAt: number | null, at = input.now): number {
  const gap = input.retryAfterMs / MAX_LOOKS_PER_RETRY_AFTER;
  let time = Math.max(input.now, at, lastPollAt === null ? at : lastPollAt + gap);
  // A per-job poller asks after every running job once per Retry-After: one look per Retry-After
  // is within its rate whatever the credit (the run's own start may owe a request or two).
  const due = (lastPollAt ?? Math.min(...input.running.map((job) => job.startedAt))) + input.retryAfterMs;
  for (let turns = 0; turns < 10_000; turns += 1) {
    if (creditAt(input, time) < 1 && time < due) {
      time = Math.min(due, nextEarningAfter(input, time));
      if (!Number.isFinite(time)) return time;
      continue;
    }
    const room = windowRoomFrom(input, time);
    if (room <= time) return time;
    time = room;
  }
  return time;
}
