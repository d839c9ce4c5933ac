/**
 * When to look at this batch's unfinished jobs next: pure, over plain numbers (times in ms on the
 * run's clock). The time between a job finishing and the run noticing is slot time lost; every
 * look is a request. So the run looks when a finish has become likely, judged from how long this
 * batch's finished jobs took, and never faster than a client polling each job at the service's
 * Retry-After would (docs/performance.md).
 */

export interface RunningJob {
  /** When the job started on the run's clock (its submission was answered). */
  startedAt: number;
}

export interface PollTimingInput {
  now: number;
  /** The previous look at the jobs; null before the first. */
  lastPollAt: number | null;
  /** A --poll-interval: then the run simply looks at that pace. */
  fixedIntervalMs: number | null;
  /** The service's Retry-After (or its documented 10 s). */
  retryAfterMs: number;
  running: readonly RunningJob[];
  /** How long this batch's finished jobs took, newest last. */
  durationsMs: readonly number[];
}

/** A look is due when this many finishes are expected to have gone unnoticed since the last. */
const EXPECTED_FINISHES_TO_POLL = 0.5;
/** Only the newest durations shape the model: it follows a service that speeds up or slows down. */
const DURATIONS_KEPT = 64;

/** The earliest time the next look may go out, and when it should. */
export function nextPollAt(input: PollTimingInput): number {
  const { now, lastPollAt, fixedIntervalMs, retryAfterMs, running } = input;
  if (running.length === 0) return Number.POSITIVE_INFINITY;
  const oldestStart = Math.min(...running.map((job) => job.startedAt));
  const previous = lastPollAt ?? oldestStart;
  if (fixedIntervalMs !== null) return Math.max(now, previous + fixedIntervalMs);
  // A per-job poller sends one request per job per Retry-After: never more often than that.
  const earliest = Math.max(now, previous + minimumGapMs(retryAfterMs, running.length));
  const cadence = Math.max(earliest, previous + retryAfterMs);
  const model = durationModel(input.durationsMs);
  if (model === null) return cadence;
  const seenAt = (job: RunningJob) => Math.max(job.startedAt, lastPollAt ?? job.startedAt);
  // A job older than anything the model knows is looked at on the service's own cadence.
  const modelled = running.filter((job) => model.survival(seenAt(job) - job.startedAt) > 0);
  if (modelled.length === 0) return cadence;
  const expected = (at: number) =>
    modelled.reduce((sum, job) => {
      const alive = model.survival(seenAt(job) - job.startedAt);
      return sum + (alive - model.survival(at - job.startedAt)) / alive;
    }, 0);
  const allDone = Math.max(...modelled.map((job) => job.startedAt)) + model.horizonMs;
  const due = firstTimeReaching(expected, EXPECTED_FINISHES_TO_POLL, earliest, Math.max(earliest, allDone));
  return modelled.length < running.length ? Math.min(due, cadence) : due;
}

/** Many jobs at once do not make the run look more than this often per Retry-After. */
const MAX_LOOKS_PER_RETRY_AFTER = 10;

/** At most one look per Retry-After per job being followed, as a per-job poller would send. */
export function minimumGapMs(retryAfterMs: number, jobs: number): number {
  return retryAfterMs / Math.min(Math.max(1, jobs), MAX_LOOKS_PER_RETRY_AFTER);
}

export interface DurationModel {
  /** Probability that a job is still unfinished at this age. */
  survival(ageMs: number): number;
  /** Beyond this age every modelled job is finished. */
  horizonMs: number;
}

/**
 * The finished durations smoothed with a box kernel: wide when there are few (one job says little
 * about the next) and never narrower than the spread the samples leave between them.
 */
export function durationModel(durationsMs: readonly number[]): DurationModel | null {
  const samples = durationsMs.slice(-DURATIONS_KEPT).filter((value) => value >= 0);
  if (samples.length === 0) return null;
  const low = Math.min(...samples);
  const high = Math.max(...samples);
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  const width = Math.max((high - low) / (samples.length + 1), (0.15 * mean) / Math.sqrt(samples.length), 1);
  const survival = (ageMs: number) => {
    let finished = 0;
    for (const value of samples) {
      const from = value - width;
      finished += ageMs <= from ? 0 : ageMs >= value + width ? 1 : (ageMs - from) / (2 * width);
    }
    return 1 - finished / samples.length;
  };
  return { survival, horizonMs: high + width };
}

/** Bisection over a non-decreasing function: the first time in [from, to] it reaches `level`. */
function firstTimeReaching(value: (at: number) => number, level: number, from: number, to: number): number {
  if (value(from) >= level) return from;
  if (value(to) < level) return to;
  let low = from;
  let high = to;
  while (high - low > 10) {
    const middle = (low + high) / 2;
    if (value(middle) >= level) high = middle;
    else low = middle;
  }
  return high;
}
