import { describe, expect, it } from 'vitest';
import { nextPollAt } from '../../src/runner/poll-timing.js';
import { PACE_SHAPES, WIDE } from '../bench/pace-shapes.js';
import { summarise } from '../bench/pace-sim.js';

/**
 * The look timing as a whole, in the zero-cost model of the benchmark's pace scenarios
 * (test/bench/pace-sim.ts): judged first by the makespan against the zero-lag limit of each draw
 * (the same durations with every finish seen at once), then by the requests against the naive
 * client's. A change to poll-timing that loses slot time or spends more shows here in seconds.
 */
describe('nextPollAt in the simulated pace scenarios', () => {
  for (const shape of PACE_SHAPES) {
    it(`${shape.name}: median makespan within 1.08x the zero-lag limit, within the naive client's requests`, () => {
      const figures = summarise(shape, nextPollAt, 200);
      expect(figures.ratio).toBeLessThanOrEqual(1.08);
      // The naive client loses about 1.2x: a finish is seen 5 s late on average.
      expect(figures.naiveRatio).toBeGreaterThan(1.15);
      // Never more requests in all than the naive client, on any draw.
      expect(figures.moreRequests).toBe(0);
      // Slower than the naive client only where its polls happen to fall right on the finishes.
      expect(figures.slowerThanNaive).toBeLessThanOrEqual(0.05);
    });
  }

  it('with 200 slots and --poll-interval 1, within 1.1x the zero-lag limit at under 1.2 requests per item', () => {
    const figures = summarise(WIDE, nextPollAt, 3);
    expect(figures.ratio).toBeLessThanOrEqual(1.1);
    expect(figures.requestsPerItem).toBeLessThanOrEqual(1.2);
  });
});
