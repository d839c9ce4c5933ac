import { z } from 'zod';

/**
 * How long the sandbox's jobs stay queued and run: a fixed time, a uniform range, a heavy tail
 * (lognormal around a median) or a mix of populations, so that a client's look timing can be tried
 * against the shapes a real service shows. Each job draws its time from hashes of the seed and its
 * key (faults.ts `draw`), so the same seed and requests give the same durations.
 */

const seconds = z.number().min(0);
const range = z
  .strictObject({ min: seconds, max: seconds })
  .refine((value) => value.min <= value.max, 'min must not exceed max');

/** seconds = median * exp(sigma * z), z standard normal; `max` cuts the tail where given. */
const lognormal = z.strictObject({
  median: z.number().positive(),
  sigma: z.number().min(0).max(3),
  max: z.number().positive().optional(),
});

const population = z
  .strictObject({ share: z.number().min(0).max(1), min: seconds, max: seconds })
  .refine((value) => value.min <= value.max, 'min must not exceed max');

const mix = z.strictObject({
  populations: z
    .array(population)
    .min(1)
    .refine(
      (parts) => Math.abs(parts.reduce((sum, part) => sum + part.share, 0) - 1) < 1e-9,
      'shares must add up to 1',
    ),
});

export const durationShape = z.union([range, lognormal, mix], {
  error: 'expected {min, max}, {median, sigma, max?} or {populations: [{share, min, max}, ...]}',
});
/** A plain number is a fixed time. */
export const queuedShape = z.union([seconds, durationShape]);

export type DurationShape = z.output<typeof durationShape>;
export type QueuedShape = z.output<typeof queuedShape>;

/**
 * One duration in seconds from `shape`, given uniform draws in [0, 1): `u(0)` and `u(1)` are two
 * independent draws (the lognormal needs both, a mix one to pick and one within the population).
 */
export function sampleSeconds(shape: QueuedShape, u: (index: 0 | 1) => number): number {
  if (typeof shape === 'number') return shape;
  if ('populations' in shape) {
    const pick = u(0);
    let edge = 0;
    let chosen = shape.populations.at(-1)!;
    for (const part of shape.populations) {
      edge += part.share;
      if (pick < edge) {
        chosen = part;
        break;
      }
    }
    return chosen.min + u(1) * (chosen.max - chosen.min);
  }
  if ('median' in shape) {
    // Box-Muller; 1 - u keeps the logarithm finite.
    const z = Math.sqrt(-2 * Math.log(1 - u(0))) * Math.cos(2 * Math.PI * u(1));
    const value = shape.median * Math.exp(shape.sigma * z);
    return shape.max === undefined ? value : Math.min(value, shape.max);
  }
  return shape.min + u(0) * (shape.max - shape.min);
}
