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

/**
 * `runs` full runs, one after another, `beforeEach` before each. Their folders are removed
 * together after the last run, not each right before the next: when it makes a file, ext4
 * without a journal (the temp dir's filesystem here) skips one by one every inode freed less than
 * a minute before, so a run that followed the removal of the previous run's 10,000 files paid
 * for the benchmark's own clean-up (perf: the kernel's find_inode_bit took 21-23% of such a
 * run's CPU, 6% of a run after no removal).
 */
export async function scaleSamples(
  root: string | undefined,
  runs: number,
  beforeEach: (run: number) => void | Promise<void>,
): Promise<ScaleSample[]> {
  const samples: ScaleSample[] = [];
  const dirs: string[] = [];
  try {
    for (let i = 1; i <= runs; i += 1) {
      await beforeEach(i);
      const { run: _run, dir, ...sample } = await scaleRun(root);
      dirs.push(dir);
      samples.push(sample);
    }
  } finally {
    for (const dir of dirs) removeDir(dir);
  }
  return samples;
}
