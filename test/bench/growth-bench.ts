import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { benchDir, benchSandboxConfig, cliEnv, removeDir } from './fixtures.js';
import { scaleFiles } from './scale-bench.js';
import { cpuMs, expectExit, rssMb, runCli } from './spawn-cli.js';

/**
 * Scenario 14, cost per item flat in the batch's size (docs/performance.md): a first run of N
 * instant jobs (limit 250), then the unchanged re-run of the done batch (nothing to send), at two
 * sizes. A pass over the batch per item shows as a re-run time that grows with N squared: doubling
 * ten times the items must not take a hundred times as long.
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
