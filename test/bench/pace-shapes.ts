import { type DurationShape, type QueuedShape, sampleSeconds } from '../../src/sandbox/durations.js';
import { seededRandom } from '../support/seeded-random.js';

/**
 * The job-duration shapes the pace simulator and the benchmark play, at the service's documented
 * pace (Retry-After 10 s, jobs queued 1-3 s, limit 3, jobs of tens of seconds), and the wide case.
 * Both draw every job's queued and running time from the same seeded generator through the
 * sandbox's own sampler, so a simulated draw and a benchmark run of one seed are the same jobs.
 */
export interface PaceShape {
  name: string;
  items: number;
  limit: number;
  queued: QueuedShape;
  running: DurationShape;
  retryAfterSeconds: number;
  /** The run's --poll-interval; null lets mediabatch learn Retry-After from the service. */
  pollIntervalSeconds: number | null;
}

const DOCUMENTED = {
  limit: 3,
  queued: { min: 1, max: 3 },
  retryAfterSeconds: 10,
  pollIntervalSeconds: null,
} as const;

export const UNIFORM: PaceShape = {
  ...DOCUMENTED,
  name: 'uniform 15-30 s',
  items: 9,
  running: { min: 15, max: 30 },
};

export const HEAVY_TAIL: PaceShape = {
  ...DOCUMENTED,
  name: 'heavy tail ~20 s',
  items: 12,
  running: { median: 20, sigma: 0.5, max: 120 },
};

export const TWO_POPULATIONS: PaceShape = {
  ...DOCUMENTED,
  name: 'two populations',
  items: 12,
  running: {
    populations: [
      { share: 0.7, min: 8, max: 12 },
      { share: 0.3, min: 40, max: 60 },
    ],
  },
};

export const PACE_SHAPES: readonly PaceShape[] = [UNIFORM, HEAVY_TAIL, TWO_POPULATIONS];

/** 200 slots, jobs of 0.6-1.8 s, --poll-interval 1: many jobs, each look lists pages of them. */
export const WIDE: PaceShape = {
  name: '200 slots',
  items: 1000,
  limit: 200,
  queued: 0,
  running: { min: 0.6, max: 1.8 },
  retryAfterSeconds: 1,
  pollIntervalSeconds: 1,
};

export interface JobTimes {
  queuedSeconds: number;
  runningSeconds: number;
}

/** Every item's queued and running time for one seed, in seconds with three decimals. */
export function drawJobTimes(shape: PaceShape, seed: number): JobTimes[] {
  const random = seededRandom(seed);
  const seconds = (of: QueuedShape) => {
    const draws = [random(), random()];
    return Math.round(sampleSeconds(of, (i) => draws[i]!) * 1000) / 1000;
  };
  return Array.from({ length: shape.items }, () => ({
    queuedSeconds: seconds(shape.queued),
    runningSeconds: seconds(shape.running),
  }));
}

/** Whole job durations (queued and running), ms: what a client sees between POST and final. */
export function drawDurationsMs(shape: PaceShape, seed: number): number[] {
  return drawJobTimes(shape, seed).map((job) => Math.round((job.queuedSeconds + job.runningSeconds) * 1000));
}
