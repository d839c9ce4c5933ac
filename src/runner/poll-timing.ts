/**
 * When to look at this batch's unfinished jobs next: pure, over plain numbers (times in ms on the
 * run's clock). The time between a job finishing and the run noticing is slot time lost, and the
 * makespan is what a person waiting for a batch feels. A client polling each job every
 * Retry-After sends one request per job per Retry-After; one look at the job list covers every
 * job, so the run spends that same budget on looks at all of them (look-limits.ts), placed where
 * the durations seen so far say finishes fall, and never spaced wider than spending the budget
 * evenly would space them (docs/performance.md).
 */
import { type DurationModel, durationModel, priorModel } from './duration-model.js';
import { earliestLookAt, type LookLimitInput } from './look-limits.js';

export interface RunningJob {
  /** When the job started on the run's clock (its submission was answered). */
  startedAt: number;
}

export interface PollTimingInput extends LookLimitInput {
  /** Slots this batch may fill: min(concurrency, account limit, items). */
  slots: number;
  /** The batch has more items than slots: a finish seen sooner lets a waiting item start sooner. */
  handsOn: boolean;
  /** The service's Retry-After, or --poll-interval in its place (else the documented 10 s). */
  retryAfterMs: number;
  running: readonly RunningJob[];
  /** How long this batch's finished jobs took, newest last. */
  durationsMs: readonly number[];
}

/**
 * A look goes out only once the model gives at least this chance that some job has finished since
 * the previous one: no request is spent where nothing can be waiting, and the credit saved goes to
 * the looks that can find a finish. Tuned in the pace simulator (test/bench/pace-sim.ts), which
 * judges the makespan against the zero-lag limit first and the requests second.
 */
const SKIP_BELOW = 0.1;
/** Once nothing waits, the saved credit is spread until every job has finished with this chance. */
const LAST_FINISH_LIKELY = 0.95;
/** However much credit is saved, looks at the last jobs stay this share of Retry-After apart. */
const END_GAP_SHARE = 0.1;
/** Jobs shorter than this many Retry-After on average end within a look or two of one another. */
const SHORT_JOBS = 2;
/** Resolution of the search for the next look, as a share of Retry-After. */
const STEPS_PER_RETRY_AFTER = 100;
/** Resolution of the search for the last finish, as a share of Retry-After. */
const HORIZON_STEPS_PER_RETRY_AFTER = 20;
/** Longest the search looks ahead, in Retry-After; the model's tail ends it long before. */
const SEARCH_RETRY_AFTERS = 50;

/**
 * The service's documented poll interval (spec 4.2, 8): the pace a run follows until the service
 * names its own, and when an unfinished job's answer names none.
 */
export const DOCUMENTED_RETRY_AFTER_MS = 10_000;

/** What the run knows at a turn of its loop, before nextPollAt can time a look. */
export interface StartInput {
  /** A Retry-After was learnt, --poll-interval was given, or asking settled it (paceFromAnswer). */
  paceKnown: boolean;
  /** Jobs being followed. */
  watching: number;
  /** Followed jobs restored from the ledger that this run has not seen since it began. */
  unseen: number;
  /** A look at the job list went out in this run already. */
  looked: boolean;
}

/**
 * What the run must learn before it can time its looks: `look` at the job list now, `probe` one
 * job for its Retry-After, or nothing. Jobs restored from the ledger come first: they may have
 * finished while no run watched them (their outputs expiring meanwhile), and the only job whose
 * answer is sure to carry Retry-After is an unfinished one (a final job's omits it), so one page of
 * the list settles every finished job and leaves the probe a job still running. That page takes
 * the place of a new ledger's check: a resumed start costs what a fresh one does.
 */
export function startStep(input: StartInput): 'look' | 'probe' | null {
  if (input.watching === 0) return null;
  if (input.unseen > 0 && !input.looked) return 'look';
  return input.paceKnown ? null : 'probe';
}

/**
 * The pace (seconds) one job's answer says: its Retry-After when it names one. A final job's answer
 * names none by design and says nothing of the pace (null: ask a job still unfinished); an
 * unfinished job's answer without one means the documented interval.
 */
export function paceFromAnswer(jobFinal: boolean, retryAfterSeconds: number | null): number | null {
  if (retryAfterSeconds !== null) return retryAfterSeconds;
  return jobFinal ? null : DOCUMENTED_RETRY_AFTER_MS / 1000;
}

/** The time the next look should go out (never before it may: see look-limits.ts). */
export function nextPollAt(input: PollTimingInput): number {
  const { running, retryAfterMs, lastPollAt } = input;
  if (running.length === 0) return Number.POSITIVE_INFINITY;
  const oldestStart = Math.min(...running.map((job) => job.startedAt));
  const allowedFrom = (at: number) => earliestLookAt(input, lastPollAt, at);
  const learnt = durationModel(input.durationsMs);
  const previous = lastPollAt ?? oldestStart;
  const drain = drainingGap(input, learnt !== null);
  if (drain !== null && lastPollAt !== null) return allowedFrom(Math.max(input.now, lastPollAt + drain));
  const model = learnt ?? priorModel(retryAfterMs);
  // Spending the budget evenly: a per-job poller's rate over the slots in use. Later only where
  // the model says no finish can be waiting (or the credit is spent); sooner only at the end.
  let even = previous + retryAfterMs / Math.max(input.slots, running.length);
  // The last job (or short ones): the credit saved is spent over the time they may still take.
  if (input.queued === 0) {
    const horizon = lastFinishHorizon(input, model, previous);
    const credit = Math.max(1, input.credit);
    even = Math.min(even, previous + Math.max(END_GAP_SHARE * retryAfterMs, (horizon - previous) / credit));
  }
  const step = retryAfterMs / STEPS_PER_RETRY_AFTER;
  const chance = finishChance(input, model);
  // The model may be wrong (a second population it has not seen yet): it skips looks for at most
  // this long, so a finish is never seen later than a per-job poller would see it.
  const latest = previous + retryAfterMs;
  const guard = searchGuard(2 * STEPS_PER_RETRY_AFTER);
  for (let at = Math.max(input.now, even); at < latest; at += step) {
    // Stryker disable next-line all: the guard against a broken search (searchGuard)
    guard();
    if (chance(at) >= SKIP_BELOW) return allowedFrom(at);
  }
  return allowedFrom(Math.max(input.now, even, latest));
}

/**
 * Once nothing waits for a slot, a finish frees nothing, and it ends the batch only if it is the
 * last. While two or more jobs that last several Retry-After run, about one look per finish
 * expected (n jobs of a typical duration d finish every d / n), at most one per Retry-After; with
 * nothing known of the durations, or in a batch that fitted its slots from the start (no finish to
 * hand on, only its end), the service's cadence. Null when the credit goes to the jobs instead:
 * the last one, or all of them when they last under a couple of Retry-After (they end within a
 * look or two of one another, and every one may be the last).
 */
function drainingGap(input: PollTimingInput, learnt: boolean): number | null {
  const { retryAfterMs, running } = input;
  if (input.queued > 0) return null;
  if (!learnt || !input.handsOn) return retryAfterMs;
  const typical = meanOf(input.durationsMs);
  if (running.length < 2 || typical < SHORT_JOBS * retryAfterMs) return null;
  return Math.min(retryAfterMs, Math.max(END_GAP_SHARE * retryAfterMs, typical / running.length));
}

/** When every running job has finished with high probability, by the model. */
function lastFinishHorizon(input: PollTimingInput, model: DurationModel, from: number): number {
  const step = input.retryAfterMs / HORIZON_STEPS_PER_RETRY_AFTER;
  const guard = searchGuard(2 * HORIZON_STEPS_PER_RETRY_AFTER * SEARCH_RETRY_AFTERS);
  for (let at = from; at < from + SEARCH_RETRY_AFTERS * input.retryAfterMs; at += step) {
    // Stryker disable next-line all: the guard against a broken search (searchGuard)
    guard();
    let all = 1;
    for (const job of input.running) all *= 1 - model.survival(at - job.startedAt);
    if (all >= LAST_FINISH_LIKELY) return at;
  }
  return from + input.retryAfterMs;
}

/** The probability that some job finished since the last look, by `at`. */
function finishChance(input: PollTimingInput, model: DurationModel): (at: number) => number {
  const seen = input.running.map((job) => {
    const age = Math.max(0, (input.lastPollAt ?? job.startedAt) - job.startedAt);
    return { startedAt: job.startedAt, alive: model.survival(age) };
  });
  return (at) => {
    let none = 1;
    for (const job of seen)
      none *= job.alive <= 0 ? 0 : Math.min(1, model.survival(at - job.startedAt) / job.alive);
    return 1 - none;
  };
}

/**
 * Both searches step over a bounded span, so they end within a known number of steps; one that
 * runs past twice that is a bug (a look time that cannot be found), and it stops loudly instead of
 * hanging the run. Never reached by correct code, so its own mutants are left out of the proof.
 */
// Stryker disable all: unreachable unless the search itself is broken (see above)
function searchGuard(limit: number): () => void {
  let left = limit;
  return () => {
    if (--left < 0) throw new Error(`the look-time search ran past ${limit} steps`);
  };
}
// Stryker restore all

function meanOf(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
}
