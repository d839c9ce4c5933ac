/**
 * How long this batch's jobs take, learnt from the ones that finished: a survival curve (the
 * probability that a job is still unfinished at a given age) for poll-timing.ts. Pure, over
 * plain numbers (ms).
 */

export interface DurationModel {
  /** Probability that a job is still unfinished at this age. */
  survival(ageMs: number): number;
}

/** Only the newest durations shape the model: it follows a service that speeds up or slows down. */
const DURATIONS_KEPT = 64;
/**
 * A job may outlive every duration seen so far. That small share of the jobs finishes, on average,
 * one kernel width after the oldest seen: a straggler is looked at again soon, not never.
 */
const TAIL_SHARE = 0.001;
/** The prior's longest job, in Retry-After. */
const PRIOR_SPAN = 4;
/** Points of the tabulated curve: a run asks for it hundreds of times per look at 200 jobs. */
const TABLE_POINTS = 256;

/**
 * The finished durations smoothed with a box kernel: wide when there are few (one job says little
 * about the next) and never narrower than the spread the samples leave between them. Both widths
 * were tuned in the pace simulator (test/bench/pace-sim.ts); the result barely moves with them.
 */
export function durationModel(durationsMs: readonly number[]): DurationModel | null {
  // The run asks on every turn of its loop with the same, only ever growing, list.
  const known = built.get(durationsMs);
  if (known?.length === durationsMs.length) return known.model;
  const model = buildModel(durationsMs);
  built.set(durationsMs, { length: durationsMs.length, model });
  return model;
}

const built = new WeakMap<readonly number[], { length: number; model: DurationModel | null }>();

function buildModel(durationsMs: readonly number[]): DurationModel | null {
  const samples = durationsMs.slice(-DURATIONS_KEPT).filter((value) => value >= 0);
  if (samples.length === 0) return null;
  const low = Math.min(...samples);
  const high = Math.max(...samples);
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  const width = Math.max(
    (2 * (high - low)) / (samples.length + 1),
    (0.3 * mean) / Math.sqrt(samples.length),
    1,
  );
  const kernel = tabulate(samples, width, low - width, high + width);
  const end = high + width;
  return {
    survival: (ageMs) => {
      const tail = ageMs <= end ? 1 : Math.exp(-(ageMs - end) / width);
      return (1 - TAIL_SHARE) * kernel(ageMs) + TAIL_SHARE * tail;
    },
  };
}

/**
 * What to expect before any job of the batch has finished. The service asks a client to wait
 * Retry-After between two looks at one job, which it would not if its jobs were usually done
 * sooner: so a job is taken to last between one and four Retry-After, spread evenly on a log
 * scale (a short look ahead at many jobs, a long one at few).
 */
export function priorModel(retryAfterMs: number): DurationModel {
  const shortest = Math.max(1, retryAfterMs);
  const longest = PRIOR_SPAN * shortest;
  return {
    survival: (ageMs) => {
      if (ageMs <= shortest) return 1;
      const tail = ageMs <= longest ? 1 : Math.exp(-(ageMs - longest) / shortest);
      const kernel = ageMs >= longest ? 0 : 1 - Math.log(ageMs / shortest) / Math.log(PRIOR_SPAN);
      return (1 - TAIL_SHARE) * kernel + TAIL_SHARE * tail;
    },
  };
}

/** The kernel's survival on a grid over [from, to], read back with linear interpolation. */
function tabulate(
  samples: readonly number[],
  width: number,
  from: number,
  to: number,
): (age: number) => number {
  const step = (to - from) / (TABLE_POINTS - 1);
  const table = Array.from({ length: TABLE_POINTS }, (_, i) => {
    const age = from + i * step;
    let finished = 0;
    for (const value of samples) finished += Math.min(1, Math.max(0, (age - value + width) / (2 * width)));
    return 1 - finished / samples.length;
  });
  return (age) => {
    if (age <= from) return 1;
    if (age >= to) return 0;
    const position = (age - from) / step;
    const index = Math.floor(position);
    const below = table[index]!;
    const above = table[Math.min(index + 1, TABLE_POINTS - 1)]!;
    return below + (above - below) * (position - index);
  };
}
