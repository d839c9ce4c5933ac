/**
 * How often the run may look at its jobs: never more often than a client polling each job every
 * Retry-After would ask (docs/performance.md). Pure, over plain numbers (ms on the run's clock).
 */

export interface RecentLook {
  at: number;
  /** How many of the jobs it followed it found finished. */
  finished: number;
}

export interface LookLimitInput {
  now: number;
  /** The previous look; null before the first. */
  lastPollAt: number | null;
  retryAfterMs: number;
  /** Jobs being followed now, and the oldest one's start. */
  following: number;
  oldestStart: number;
  /** Items waiting to be submitted. */
  queued: number;
  /** This run's looks of the last Retry-After, oldest first. */
  recentLooks: readonly RecentLook[];
}

/** Many jobs at once do not make the run look more than this often per Retry-After. */
const MAX_LOOKS_PER_RETRY_AFTER = 10;

/** At most one look per Retry-After per job being followed, as a per-job poller would send. */
export function minimumGapMs(retryAfterMs: number, jobs: number): number {
  return retryAfterMs / Math.min(Math.max(1, jobs), MAX_LOOKS_PER_RETRY_AFTER);
}

/**
 * The earliest time the next look may go out. While items wait, a look that shows a finish is
 * followed by a submission, so looks keep a per-job poller's spacing: Retry-After / n apart. Once
 * nothing is left to submit, the looks a per-job poller would still spend on the jobs that
 * finished in the last Retry-After may go to the ones left: in any window of one Retry-After, no
 * more looks than jobs followed in it. That is what shortens the wait for the last job.
 */
export function earliestLookAt(input: LookLimitInput): number {
  const { now, retryAfterMs, following } = input;
  if (input.queued > 0) {
    const previous = input.lastPollAt ?? input.oldestStart;
    return Math.max(now, previous + minimumGapMs(retryAfterMs, following));
  }
  let at = now;
  for (;;) {
    const inWindow = input.recentLooks.filter((look) => look.at > at - retryAfterMs);
    const followed = following + inWindow.reduce((sum, look) => sum + look.finished, 0);
    const allowed = Math.min(Math.max(1, followed), MAX_LOOKS_PER_RETRY_AFTER);
    if (inWindow.length < allowed) return at;
    // The window has room once enough of its looks have left it.
    at = inWindow[inWindow.length - allowed]!.at + retryAfterMs;
  }
}
