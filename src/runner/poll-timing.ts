/**
 * When to look at this batch's unfinished jobs next: pure, over plain numbers (times in ms on the
 * run's clock). The time between a job finishing and the run noticing is slot time lost; every
 * look is a request. So the run looks once the time a look would save is worth a request, judged
 * from how long this batch's finished jobs took, and never more often than a client polling each
 * job at the service's Retry-After would (look-limits.ts, docs/performance.md).
 */
import { type DurationModel, durationModel, priorModel } from './duration-model.js';
import { earliestLookAt, type RecentLook } from './look-limits.js';

export interface RunningJob {
  /** When the job started on the run's clock (its submission was answered). */
  startedAt: number;
}

export interface PollTimingInput {
  now: number;
  /** The previous look at the jobs; null before the first. */
  lastPollAt: number | null;
  /** The service's Retry-After, or --poll-interval in its place (else the documented 10 s). */
  retryAfterMs: number;
  running: readonly RunningJob[];
  /** How long this batch's finished jobs took, newest last. */
  durationsMs: readonly number[];
  /** Items waiting to be submitted: a finish noticed sooner lets one of them start sooner. */
  queued: number;
  /** This run's looks of the last Retry-After, oldest first. */
  recentLooks: readonly RecentLook[];
}

/**
 * What a look costs, in slot time it must be expected to save, as a share of Retry-After. While
 * items wait, every unnoticed finish holds a slot idle; once none wait, only the last finish
 * matters (it ends the batch). Tuned in the pace simulator (test/bench/pace-sim.ts) for the fewest
 * requests at the shortest makespan; see docs/performance.md for the trade-off.
 */
const SLOT_TIME_PER_LOOK = 0.3;
const END_TIME_PER_LOOK = 0.1;
/**
 * Once nothing waits, a job noticed late still has its files to fetch after the last look: each
 * unnoticed finish counts for this share of a slot beside the chance that all have finished.
 */
const FETCH_SHARE = 0.05;
/** Resolution of the search for the next look, as a share of Retry-After. */
const STEPS_PER_RETRY_AFTER = 100;
/** Longest the search looks ahead, in Retry-After; the model's tail ends it long before. */
const SEARCH_RETRY_AFTERS = 50;

/** The time the next look should go out (never before it may: see look-limits.ts). */
export function nextPollAt(input: PollTimingInput): number {
  const { running, retryAfterMs, lastPollAt } = input;
  if (running.length === 0) return Number.POSITIVE_INFINITY;
  const oldestStart = Math.min(...running.map((job) => job.startedAt));
  // The limit is not monotone in time (a look that found jobs finished leaves the window, and with
  // it their share), so whatever time is chosen is checked again from there.
  const allowedFrom = (at: number) =>
    earliestLookAt({ ...input, now: at, following: running.length, oldestStart });
  const earliest = allowedFrom(input.now);
  const previous = lastPollAt ?? oldestStart;
  const learnt = durationModel(input.durationsMs);
  // Until a job has finished, one guess times the first look; after it, the service's cadence.
  if (learnt === null && lastPollAt !== null)
    return allowedFrom(Math.max(earliest, lastPollAt + retryAfterMs));
  const model = learnt ?? priorModel(retryAfterMs);
  const level = (input.queued > 0 ? SLOT_TIME_PER_LOOK : END_TIME_PER_LOOK) * retryAfterMs;
  const step = retryAfterMs / STEPS_PER_RETRY_AFTER;
  const rate = lossRate(input, model);
  let lost = 0;
  for (let at = previous; at < previous + SEARCH_RETRY_AFTERS * retryAfterMs; at += step) {
    lost += rate(at) * step;
    if (lost >= level && at >= earliest) return allowedFrom(at);
  }
  return allowedFrom(Math.max(earliest, previous + retryAfterMs));
}

/**
 * How fast time is being lost at `at` for lack of a look (slot-ms per ms): while items wait, the
 * expected number of jobs finished since the last look, at most one per waiting item; once none
 * wait, mostly the probability that every job has finished, for then the batch waits only on us.
 */
function lossRate(input: PollTimingInput, model: DurationModel): (at: number) => number {
  const seen = input.running.map((job) => {
    const age = Math.max(0, (input.lastPollAt ?? job.startedAt) - job.startedAt);
    return { startedAt: job.startedAt, alive: model.survival(age) };
  });
  const finished = (job: { startedAt: number; alive: number }, at: number) =>
    job.alive <= 0 ? 1 : Math.max(0, 1 - model.survival(at - job.startedAt) / job.alive);
  if (input.queued > 0) {
    return (at) =>
      Math.min(
        input.queued,
        seen.reduce((sum, job) => sum + finished(job, at), 0),
      );
  }
  return (at) => {
    const chances = seen.map((job) => finished(job, at));
    const all = chances.reduce((product, chance) => product * chance, 1);
    return all + FETCH_SHARE * chances.reduce((sum, chance) => sum + chance, 0);
  };
}
