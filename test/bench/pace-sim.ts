/**
 * A fast model of scenarios 6-8 (docs/performance.md): the run loop's looks, driven by the real
 * pure `nextPollAt`, beside the naive client, over thousands of seeded job-duration draws, in
 * seconds instead of 1.5-minute real runs. Network, ledger, CPU and download time count as zero,
 * so it shows what the timing of the looks costs and nothing else.
 *
 * mediabatch: GET /account, on a new ledger one GET /jobs for jobs it does not know, then a POST
 * into every free slot (the job starts at once); without --poll-interval one GET /jobs/{id} right
 * after the first acceptance learns Retry-After. Then, whenever `nextPollAt` says, one look (one
 * list call) sees every job finished by then, and the freed slots are filled in the same turn.
 * The naive client (naive-client.ts): the account read, a POST per item at the limit, then
 * GET /jobs/{id} every Retry-After from its POST until final.
 *
 *   node --import tsx test/bench/pace-sim.ts [draws]
 */
import { nextPollAt, type PollTimingInput } from '../../src/runner/poll-timing.js';
import { seededRandom } from '../support/seeded-random.js';
import { maxInWindow } from './request-windows.js';

export interface SimCase {
  name: string;
  items: number;
  limit: number;
  minMs: number;
  maxMs: number;
  retryAfterMs: number;
  /** --poll-interval, ms; null: learn Retry-After from the service. */
  pollIntervalMs: number | null;
}

export interface SimFigures {
  makespanMs: number;
  requests: number;
  maxInWindow: number;
}

export type Timing = (input: PollTimingInput) => number;

/** One mediabatch run on the given durations; `timing` decides every look. */
export function simulateRun(
  pace: SimCase,
  durationsMs: readonly number[],
  timing: Timing = nextPollAt,
): SimFigures {
  const retryAfterMs = pace.pollIntervalMs ?? pace.retryAfterMs;
  const requests: number[] = [0, 0];
  const queue = [...durationsMs];
  const running: Array<{ startedAt: number; endsAt: number }> = [];
  const seen: number[] = [];
  const looks: Array<{ at: number; finished: number }> = [];
  let now = 0;
  const fill = () => {
    for (; running.length < pace.limit && queue.length > 0; requests.push(now))
      running.push({ startedAt: now, endsAt: now + queue.shift()! });
  };
  fill();
  if (pace.pollIntervalMs === null) requests.push(now);
  let lastSeenAt = 0;
  while (running.length > 0) {
    const at = timing({
      now,
      lastPollAt: looks.at(-1)?.at ?? null,
      retryAfterMs,
      running,
      durationsMs: seen,
      queued: queue.length,
      recentLooks: looks.filter((look) => look.at > now - retryAfterMs),
    });
    if (!Number.isFinite(at) || looks.length > 100_000) throw new Error('the simulated run does not end');
    now = Math.max(now, at);
    requests.push(now);
    const done = running.filter((job) => job.endsAt <= now);
    looks.push({ at: now, finished: done.length });
    for (const job of done) {
      seen.push(job.endsAt - job.startedAt);
      running.splice(running.indexOf(job), 1);
      lastSeenAt = now;
    }
    fill();
  }
  return {
    makespanMs: lastSeenAt,
    requests: requests.length,
    maxInWindow: maxInWindow(requests, retryAfterMs),
  };
}

/** The naive client on the same durations: per-job polling every Retry-After from its POST. */
export function simulateNaive(pace: SimCase, durationsMs: readonly number[]): SimFigures {
  const requests: number[] = [0];
  const freeAt = Array.from({ length: pace.limit }, () => 0);
  let makespan = 0;
  for (const duration of durationsMs) {
    const slot = freeAt.indexOf(Math.min(...freeAt));
    const start = freeAt[slot]!;
    const polls = Math.max(1, Math.ceil(duration / pace.retryAfterMs));
    requests.push(start, ...Array.from({ length: polls }, (_, k) => start + (k + 1) * pace.retryAfterMs));
    freeAt[slot] = start + polls * pace.retryAfterMs;
    makespan = Math.max(makespan, freeAt[slot]!);
  }
  return {
    makespanMs: makespan,
    requests: requests.length,
    maxInWindow: maxInWindow(requests, pace.retryAfterMs),
  };
}

/** Greedy list scheduling with every finish seen the instant it happens: no polling client beats it. */
export function zeroLagMakespanMs(limit: number, durationsMs: readonly number[]): number {
  const freeAt = Array.from({ length: limit }, () => 0);
  for (const duration of durationsMs) freeAt[freeAt.indexOf(Math.min(...freeAt))]! += duration;
  return Math.max(...freeAt);
}

export function drawDurations(pace: SimCase, seed: number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: pace.items }, () =>
    Math.round(pace.minMs + (pace.maxMs - pace.minMs) * random()),
  );
}

export interface SimSummary {
  /** Medians over the draws. */
  makespanRatio: number;
  requestRatio: number;
  utilisation: number;
  naiveUtilisation: number;
  zeroLagUtilisation: number;
  /** Share of draws meeting the goals: <= 0.92x makespan, <= 0.6x requests. */
  meetsMakespan: number;
  meetsRequests: number;
  /** Share of draws whose busiest window holds more requests than the naive client's. */
  windowAbove: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const share = (values: boolean[]) => values.filter(Boolean).length / values.length;

/** Medians over `draws` seeded duration sets (seeds from `firstSeed`). */
export function summarise(pace: SimCase, timing: Timing, draws: number, firstSeed = 1): SimSummary {
  const samples = Array.from({ length: draws }, (_, i) => {
    const durations = drawDurations(pace, firstSeed + i);
    const ideal = durations.reduce((sum, value) => sum + value, 0) / pace.limit;
    const run = simulateRun(pace, durations, timing);
    const naive = simulateNaive(pace, durations);
    return { run, naive, ideal, zeroLag: zeroLagMakespanMs(pace.limit, durations) };
  });
  const makespan = samples.map((x) => x.run.makespanMs / x.naive.makespanMs);
  const requests = samples.map((x) => x.run.requests / x.naive.requests);
  return {
    makespanRatio: median(makespan),
    requestRatio: median(requests),
    utilisation: median(samples.map((x) => x.ideal / x.run.makespanMs)),
    naiveUtilisation: median(samples.map((x) => x.ideal / x.naive.makespanMs)),
    zeroLagUtilisation: median(samples.map((x) => x.ideal / x.zeroLag)),
    meetsMakespan: share(makespan.map((value) => value <= 0.92)),
    meetsRequests: share(requests.map((value) => value <= 0.6)),
    windowAbove: share(samples.map((x) => x.run.maxInWindow > x.naive.maxInWindow)),
  };
}

export const SIM_PACE: SimCase = {
  name: 'pace',
  items: 9,
  limit: 3,
  minMs: 15_000,
  maxMs: 30_000,
  retryAfterMs: 10_000,
  pollIntervalMs: null,
};

export const SIM_WIDE: SimCase = {
  name: 'wide',
  items: 1000,
  limit: 200,
  minMs: 600,
  maxMs: 1800,
  retryAfterMs: 1000,
  pollIntervalMs: 1000,
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const draws = Number(process.argv[2] ?? 2000);
  const scaled = { ...SIM_PACE, name: 'pace/10', minMs: 1500, maxMs: 3000, retryAfterMs: 1000 };
  const cases: Array<[SimCase, number]> = [
    [SIM_PACE, draws],
    [scaled, draws],
    [SIM_WIDE, 5],
  ];
  for (const [pace, n] of cases) {
    const figures = Object.entries(summarise(pace, nextPollAt, n)).map(
      ([key, value]) => `${key} ${value.toFixed(3)}`,
    );
    process.stdout.write(`${pace.name} (${n} draws): ${figures.join(', ')}\n`);
  }
}
