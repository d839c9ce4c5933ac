import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { benchDir, benchSandboxConfig, cliEnv, removeDir } from './fixtures.js';
import { paceRun } from './pace-bench.js';
import type { PaceShape } from './pace-shapes.js';
import { scaleFiles } from './scale-bench.js';
import { cpuMs, expectExit, rssMb, runCli } from './spawn-cli.js';

/**
 * Scenario 14, cost per item flat in the batch's size (docs/performance.md): a first run of N
 * instant jobs (limit 250), then the unchanged re-run of the done batch (nothing to send), at two
 * sizes. A pass over the batch per item shows as a re-run time that grows with N squared: doubling
 * ten times the items must not take a hundred times as long. Beside them, a first run whose jobs
 * take time (0.6-1.8 s, limit 250) at 1,200 and at 10,000 items: its slot utilisation must not
 * fall with the batch's size (at 10,000 at least 0.9x that at 1,200).
 */
export const GROWTH_SIZES = [1_000, 10_000] as const;
const LIMIT = 250;

export interface GrowthSample {
  items: number;
  firstWallMs: number;
  firstCpuMs: number;
  firstRssMb: number;
  againWallMs: number;
  againCpuMs: number;
  againRssMb: number;
}

export async function growthRun(items: number): Promise<GrowthSample> {
  const sandbox: SandboxHandle = await startSandbox(
    benchSandboxConfig(LIMIT, {
      queued_seconds: 0,
      running_seconds: { min: 0, max: 0 },
      retry_after_seconds: 1,
    }),
    { port: 0 },
  );
  const files = scaleFiles(items);
  const dir = benchDir('growth', {
    ...files,
    'batch.yaml': files['batch.yaml']!.replace(/concurrency: \d+/, `concurrency: ${LIMIT}`),
  });
  try {
    const args = ['run', 'batch.yaml', '--base-url', sandbox.baseUrl, '--poll-interval', '1', '--json'];
    const options = { cwd: dir, env: cliEnv(sandbox), timeoutMs: 1_800_000 };
    const first = await runCli(args, options);
    expectExit(first, 0, `growth first run of ${items}`);
    const again = await runCli(args, options);
    expectExit(again, 0, `growth re-run of ${items}`);
    const jobs = sandbox.records().jobs.length;
    if (jobs !== items) throw new Error(`${jobs} jobs for ${items} items: the re-run paid again`);
    return {
      items,
      firstWallMs: first.wallMs,
      firstCpuMs: cpuMs(first.stats),
      firstRssMb: rssMb(first.stats),
      againWallMs: again.wallMs,
      againCpuMs: cpuMs(again.stats),
      againRssMb: rssMb(again.stats),
    };
  } finally {
    await sandbox.close();
    removeDir(dir);
  }
}

/** The paced first runs: the same settings at each size, only the number of items differs. */
export const PACED_SIZES = [1_200, 10_000] as const;
/** One draw of job times for both sizes' runs. */
export const PACED_SEED = 7201;

export const pacedShape = (items: number): PaceShape => ({
  name: `growth paced ${items}`,
  items,
  limit: LIMIT,
  queued: 0,
  running: { min: 0.6, max: 1.8 },
  retryAfterSeconds: 1,
  pollIntervalSeconds: 1,
});

export interface PacedGrowthSample {
  items: number;
  utilisation: number;
  makespanMs: number;
  zeroLagMs: number;
}

/** A first run of `items` jobs of 0.6-1.8 s at limit 250, mediabatch alone on its sandbox. */
export async function pacedGrowthRun(items: number, seed: number): Promise<PacedGrowthSample> {
  const sample = await paceRun(pacedShape(items), seed, true);
  return {
    items,
    utilisation: sample.cli.utilisation,
    makespanMs: sample.cli.makespanMs,
    zeroLagMs: sample.zeroLagMs,
  };
}
