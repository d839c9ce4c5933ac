import { describe, expect, it } from 'vitest';
import { parseSandboxConfig } from '../../src/sandbox/config.js';
import { sampleSeconds } from '../../src/sandbox/durations.js';
import type { SandboxConfigInput } from '../../src/sandbox/index.js';
import { body, newKey, ROOMY, setup } from './helpers.js';

/** Submits `count` jobs, lets every one finish, and answers their whole durations in seconds. */
async function durations(config: SandboxConfigInput, count: number): Promise<number[]> {
  const { sandbox, client, clock } = await setup({ ...ROOMY, ...config });
  for (let i = 0; i < count; i += 1) await client.createVideoJob(body(`shot ${i}`), newKey());
  clock.advance(1000);
  return sandbox.records().jobs.map((job) => {
    if (job.completedAt === null) throw new Error(`job ${job.id} did not finish`);
    return (Date.parse(job.completedAt) - Date.parse(job.createdAt)) / 1000;
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('sandbox: duration shapes', () => {
  it('a heavy tail: lognormal around its median, cut at max', async () => {
    const seen = await durations(
      { queued_seconds: 0, running_seconds: { median: 20, sigma: 0.5, max: 60 } },
      200,
    );
    // The median of 200 draws varies by about 0.9 s around 20 (random keys pick the draws): 4.5 of
    // those either side, so that a right shape never fails and a wrong median still does.
    expect(median(seen)).toBeGreaterThan(16);
    expect(median(seen)).toBeLessThan(24);
    expect(Math.max(...seen)).toBeLessThanOrEqual(60);
    // A tail: some jobs take more than twice the median, some less than two thirds of it.
    expect(seen.filter((value) => value > 40).length).toBeGreaterThan(0);
    expect(seen.filter((value) => value < 13).length).toBeGreaterThan(0);
  });

  it('two populations, each in its range, in about their shares', async () => {
    const populations = [
      { share: 0.7, min: 8, max: 12 },
      { share: 0.3, min: 40, max: 60 },
    ];
    const seen = await durations({ queued_seconds: 0, running_seconds: { populations } }, 200);
    const long = seen.filter((value) => value >= 40 && value <= 60).length;
    const short = seen.filter((value) => value >= 8 && value <= 12).length;
    expect(long + short).toBe(200);
    expect(long / 200).toBeGreaterThan(0.2);
    expect(long / 200).toBeLessThan(0.4);
  });

  it('a queued range adds its own draw to each job', async () => {
    const seen = await durations(
      { queued_seconds: { min: 1, max: 3 }, running_seconds: { min: 2, max: 2 } },
      100,
    );
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(3);
    expect(Math.max(...seen)).toBeLessThanOrEqual(5);
    expect(Math.max(...seen) - Math.min(...seen)).toBeGreaterThan(1.5);
  });

  it('[[queued:s]] and [[run:s]] pin one job: queued, then running, then final, to the millisecond', async () => {
    const { client, clock } = await setup({ queued_seconds: { min: 1, max: 3 } });
    const job = await client.createVideoJob(body('pinned [[queued:2.5]] [[run:4]]'), newKey());
    clock.advance(2.499);
    expect((await client.getJob(job.data.id)).data.status).toBe('queued');
    clock.advance(0.001);
    expect((await client.getJob(job.data.id)).data.status).toBe('running');
    clock.advance(3.999);
    expect((await client.getJob(job.data.id)).data.status).toBe('running');
    clock.advance(0.001);
    expect((await client.getJob(job.data.id)).data.status).toBe('succeeded');
  });

  it('draws the same durations from the same uniforms as the benchmark does', () => {
    const draws = [0.25, 0.5];
    const u = (i: 0 | 1) => draws[i]!;
    expect(sampleSeconds(4, u)).toBe(4);
    expect(sampleSeconds({ min: 10, max: 20 }, u)).toBe(12.5);
    // Box-Muller at (0.25, 0.5): z = -sqrt(-2 ln 0.75), so below the median.
    expect(sampleSeconds({ median: 20, sigma: 0.5 }, u)).toBeCloseTo(
      20 * Math.exp(-0.5 * Math.sqrt(-2 * Math.log(0.75))),
      9,
    );
    const mix = {
      populations: [
        { share: 0.3, min: 40, max: 60 },
        { share: 0.7, min: 8, max: 12 },
      ],
    };
    expect(sampleSeconds(mix, u)).toBe(40 + 0.5 * 20);
  });
});

describe('sandbox: duration shapes in the config', () => {
  it('names the setting and what it accepts', () => {
    const problem = (config: SandboxConfigInput) => {
      try {
        parseSandboxConfig(config);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('expected the config to be rejected');
    };
    expect(problem({ running_seconds: { populations: [{ share: 0.5, min: 1, max: 2 }] } })).toBe(
      'sandbox config: running_seconds.populations: shares must add up to 1',
    );
    expect(problem({ running_seconds: { median: 20 } as never })).toContain(
      'running_seconds: expected {min, max}, {median, sigma, max?} or {populations',
    );
    expect(problem({ queued_seconds: { min: 3, max: 1 } })).toBe(
      'sandbox config: queued_seconds: min must not exceed max',
    );
  });
});
