import { describe, expect, it } from 'vitest';
import { nextPollAt } from '../../src/runner/poll-timing.js';
import { SIM_PACE, SIM_WIDE, summarise } from '../bench/pace-sim.js';

/**
 * The look timing as a whole, in the zero-cost model of the benchmark's scenarios
 * (test/bench/pace-sim.ts): a change to poll-timing that spends more requests or loses slot time
 * shows here in a second, long before a 1.5-minute benchmark run.
 */
describe('nextPollAt in the simulated scenarios', () => {
  it("at the documented pace, spends at most 0.6 of the naive client's requests and ends sooner", () => {
    const figures = summarise(SIM_PACE, nextPollAt, 300);
    expect(figures.requestRatio).toBeLessThanOrEqual(0.6);
    expect(figures.makespanRatio).toBeLessThan(0.97);
    expect(figures.utilisation).toBeGreaterThan(figures.naiveUtilisation + 0.03);
  });

  it('with 200 slots and --poll-interval 1, keeps the slots busy where a look a second could not', () => {
    const figures = summarise(SIM_WIDE, nextPollAt, 3);
    expect(figures.utilisation).toBeGreaterThan(0.75);
    expect(figures.naiveUtilisation).toBeLessThan(0.7);
  });
});
