/**
 * A fast model of the pace benchmark (docs/performance.md): the run loop's looks, driven by the
 * real pure `nextPollAt`, beside the naive client and the zero-lag limit, over thousands of seeded
 * job-duration draws of each shape (pace-shapes.ts), in seconds instead of minutes of real runs.
 * Network, ledger, CPU and download time count as zero, so it shows what the timing of the looks
 * costs and nothing else. Policies are judged by their makespan's ratio to the zero-lag limit
 * first, their requests second.
 *
 * mediabatch: GET /account, on a new ledger one GET /jobs for jobs it does not know, then a POST
 * into every free slot (the job starts at once); without --poll-interval one GET /jobs/{id} right
 * after the first acceptance learns Retry-After. Then, whenever `nextPollAt` says, one look (a
 * list call per page of 100 jobs created since the oldest unfinished one) sees every job finished
 * by then, and the freed slots are filled in the same turn.
 * The naive client (naive-client.ts): the account read, a POST per item at the limit, then
 * GET /jobs/{id} every Retry-After from its POST until final.
 *
 *   node --import tsx test/bench/pace-sim.ts [draws]
 */

import { lookCredit, pollsFor, pollsOver, windowCap } from '../../src/runner/look-limits.js';
import { nextPollAt, type PollTimingInput } from '../../src/runner/poll-timing.js';
import { drawDurationsMs, PACE_SHAPES, type PaceShape, WIDE } from './pace-shapes.js';
import { maxInWindow } from './request-windows.js';

export interface SimFigures {
  makespanMs: number;
  requests: number;
  maxInWindow: number;
}

export type Timing = (input: PollTimingInput) => number;

const PAGE = 100;

/** One mediabatch run on the given durations; `timing` decides every look. */
export function simulateRun(
  shape: PaceShape,
  durationsMs: readonly number[],
  timing: Timing = nextPollAt,
): SimFigures {
  const retryAfterMs = (shape.pollIntervalSeconds ?? shape.retryAfterSeconds) * 1000;
  const probes = shape.pollIntervalSeconds === null ? 1 : 0;
  // The account read and the new ledger's check.
  const requests: number[] = [0, 0];
  const queue = [...durationsMs];
  const running: Array<{ startedAt: number; endsAt: number }> = [];
  const created: number[] = [];
  const seen: number[] = [];
  let now = 0;
  let lastLookAt: number | null = null;
  let pages = 0;
  let earnedByFinished = 0;
  const fill = () => {
    for (; running.length < shape.limit && queue.length > 0; requests.push(now)) {
      running.push({ startedAt: now, endsAt: now + queue.shift()! });
      created.push(now);
    }
  };
  fill();
  if (probes > 0) requests.push(now);
  let lastSeenAt = 0;
  const cap = windowCap(Math.min(shape.limit, durationsMs.length));
  while (running.length > 0) {
    const earned =
      earnedByFinished +
      queue.length +
      running.reduce((sum, job) => sum + pollsOver(job.startedAt, now, retryAfterMs), 0);
    const at = timing({
      now,
      lastPollAt: lastLookAt,
      retryAfterMs,
      running,
      durationsMs: seen,
      queued: queue.length,
      slots: Math.min(shape.limit, durationsMs.length),
      handsOn: durationsMs.length > shape.limit,
      credit: lookCredit(earned, pages, probes + 1),
      recentRequests: requests.filter((sent) => sent > now - retryAfterMs),
      windowCap: cap,
    });
    if (!Number.isFinite(at) || pages > 100_000) throw new Error('the simulated run does not end');
    now = Math.max(now, at);
    lastLookAt = now;
    const oldest = Math.min(...running.map((job) => job.startedAt));
    const listed = created.filter((start) => start >= oldest).length;
    for (let page = 0; page < Math.max(1, Math.ceil(listed / PAGE)); page += 1) requests.push(now);
    pages += Math.max(1, Math.ceil(listed / PAGE));
    const done = running.filter((job) => job.endsAt <= now);
    for (const job of done) {
      seen.push(job.endsAt - job.startedAt);
      earnedByFinished += pollsFor(job.endsAt - job.startedAt, retryAfterMs);
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
export function simulateNaive(shape: PaceShape, durationsMs: readonly number[]): SimFigures {
  const retryAfterMs = shape.retryAfterSeconds * 1000;
  const requests: number[] = [0];
  const freeAt = Array.from({ length: shape.limit }, () => 0);
  let makespan = 0;
  for (const duration of durationsMs) {
    const slot = freeAt.indexOf(Math.min(...freeAt));
    const start = freeAt[slot]!;
    const polls = Math.max(1, Math.ceil(duration / retryAfterMs));
    requests.push(start, ...Array.from({ length: polls }, (_, k) => start + (k + 1) * retryAfterMs));
    freeAt[slot] = start + polls * retryAfterMs;
    makespan = Math.max(makespan, freeAt[slot]!);
  }
  return {
    makespanMs: makespan,
    requests: requests.length,
    maxInWindow: maxInWindow(requests, retryAfterMs),
  };
}

/**
 * The zero-lag limit: the same durations, in the order the jobs were created, placed greedily on
 * the slots with every finish seen the instant it happens. No polling client beats it.
 */
export function zeroLagMakespanMs(limit: number, durationsMs: readonly number[]): number {
  const freeAt = Array.from({ length: limit }, () => 0);
  for (const duration of durationsMs) freeAt[freeAt.indexOf(Math.min(...freeAt))]! += duration;
  return Math.max(...freeAt);
}

export interface SimDraw {
  seed: number;
  zeroLagMs: number;
  run: SimFigures;
  naive: SimFigures;
}

export function simulateDraw(shape: PaceShape, seed: number, timing: Timing = nextPollAt): SimDraw {
  const durations = drawDurationsMs(shape, seed);
  return {
    seed,
    zeroLagMs: zeroLagMakespanMs(shape.limit, durations),
    run: simulateRun(shape, durations, timing),
    naive: simulateNaive(shape, durations),
  };
}

export interface SimSummary {
  /** Median and worst of mediabatch's makespan / the zero-lag limit: the first judge. */
  ratio: number;
  worstRatio: number;
  /** The same for the naive client. */
  naiveRatio: number;
  /** Median of mediabatch's requests / the naive client's: the second judge. */
  requestRatio: number;
  /** Shares of draws that break a goal: slower than naive, more requests, a busier window. */
  slowerThanNaive: number;
  moreRequests: number;
  busierWindow: number;
  /** Median of sum(durations) / limit / makespan. */
  utilisation: number;
  /** Median requests per item. */
  requestsPerItem: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const share = (values: boolean[]) => values.filter(Boolean).length / values.length;

/** The figures over `draws` seeded duration sets (seeds from `firstSeed`). */
export function summarise(shape: PaceShape, timing: Timing, draws: number, firstSeed = 1): SimSummary {
  const samples = Array.from({ length: draws }, (_, i) => simulateDraw(shape, firstSeed + i, timing));
  const ratios = samples.map((x) => x.run.makespanMs / x.zeroLagMs);
  return {
    ratio: median(ratios),
    worstRatio: Math.max(...ratios),
    naiveRatio: median(samples.map((x) => x.naive.makespanMs / x.zeroLagMs)),
    requestRatio: median(samples.map((x) => x.run.requests / x.naive.requests)),
    slowerThanNaive: share(samples.map((x) => x.run.makespanMs > x.naive.makespanMs)),
    moreRequests: share(samples.map((x) => x.run.requests > x.naive.requests)),
    busierWindow: share(samples.map((x) => x.run.maxInWindow > x.naive.maxInWindow)),
    utilisation: median(samples.map((x) => drawSum(shape, x.seed) / shape.limit / x.run.makespanMs)),
    requestsPerItem: median(samples.map((x) => x.run.requests / shape.items)),
  };
}

const drawSum = (shape: PaceShape, seed: number) =>
  drawDurationsMs(shape, seed).reduce((sum, value) => sum + value, 0);

if (import.meta.url === `file://${process.argv[1]}`) {
  const draws = Number(process.argv[2] ?? 1000);
  const cases: Array<[PaceShape, number]> = [
    ...PACE_SHAPES.map((shape): [PaceShape, number] => [shape, draws]),
    [WIDE, 5],
  ];
  for (const [shape, n] of cases) {
    const figures = Object.entries(summarise(shape, nextPollAt, n)).map(
      ([key, value]) => `${key} ${value.toFixed(3)}`,
    );
    process.stdout.write(`${shape.name} (${n} draws): ${figures.join(', ')}\n`);
  }
}
