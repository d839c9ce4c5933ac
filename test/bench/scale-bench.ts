import { startSandbox } from '../../src/sandbox/index.js';
import { benchDir, benchSandboxConfig, cliEnv, removeDir } from './fixtures.js';
import { type CliRun, cpuMs, expectExit, rssMb, runCli } from './spawn-cli.js';

/**
 * Scenario 3: 5,000 items whose jobs are final the moment they are accepted (queued and running
 * 0 s), account limit 500 and manifest concurrency 500, so the CLI's own overhead (manifest,
 * ledger commits, HTTP, downloads with fsync) is all that is measured.
 */
export const SCALE_ITEMS = 5_000;
const SCALE_LIMIT = 500;

export interface ScaleSample {
  itemsPerSecond: number;
  cpuMsPerItem: number;
  userCpuMsPerItem: number;
  systemCpuMsPerItem: number;
  peakRssMb: number;
  wallMs: number;
}

export function scaleFiles(items: number): Record<string, string> {
  const lines: string[] = [];
  for (let i = 1; i <= items; i += 1) {
    const id = `clip-${String(i).padStart(6, '0')}`;
    lines.push(JSON.stringify({ id, prompt: `Product shot ${i}: a ceramic mug turning on a white table` }));
  }
  return {
    'batch.yaml': `version: 1\nname: bench-scale\ninput: {seconds: 2, definition: 480p}\nconcurrency: ${SCALE_LIMIT}\nitems_from: items.jsonl\n`,
    'items.jsonl': `${lines.join('\n')}\n`,
  };
}

/**
 * One full run with the manifest, ledger and outputs under `root` (default: the OS temp dir);
 * `nodeArgs` lets the profiler ride along (`--cpu-prof`).
 */
export async function scaleRun(
  root?: string,
  nodeArgs: string[] = [],
): Promise<ScaleSample & { run: CliRun; dir: string }> {
  const sandbox = await startSandbox(
    benchSandboxConfig(SCALE_LIMIT, {
      queued_seconds: 0,
      running_seconds: { min: 0, max: 0 },
      retry_after_seconds: 1,
    }),
    { port: 0 },
  );
  const dir = benchDir('scale', scaleFiles(SCALE_ITEMS), root);
  try {
    const run = await runCli(
      ['run', 'batch.yaml', '--base-url', sandbox.baseUrl, '--poll-interval', '1', '--json'],
      { cwd: dir, env: cliEnv(sandbox), timeoutMs: 240_000, nodeArgs },
    );
    expectExit(run, 0, 'scale run');
    const report = JSON.parse(run.stdout) as { totals: { done: number } };
    if (report.totals.done !== SCALE_ITEMS) throw new Error(`only ${report.totals.done} items done`);
    const jobs = sandbox.records().jobs.length;
    if (jobs !== SCALE_ITEMS) throw new Error(`${jobs} jobs for ${SCALE_ITEMS} items`);
    return {
      itemsPerSecond: SCALE_ITEMS / (run.wallMs / 1000),
      cpuMsPerItem: cpuMs(run.stats) / SCALE_ITEMS,
      userCpuMsPerItem: run.stats.userCpuMicros / 1000 / SCALE_ITEMS,
      systemCpuMsPerItem: run.stats.systemCpuMicros / 1000 / SCALE_ITEMS,
      peakRssMb: rssMb(run.stats),
      wallMs: run.wallMs,
      run,
      dir,
    };
  } finally {
    await sandbox.close();
  }
}

export async function scaleSample(root?: string): Promise<ScaleSample> {
  const { run: _run, dir, ...sample } = await scaleRun(root);
  removeDir(dir);
  return sample;
}
