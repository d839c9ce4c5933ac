import { startSandbox } from '../../src/sandbox/index.js';
import type { PostgresTestServer } from '../support/postgres-server.js';
import { benchDir, cliEnv, removeDir } from './fixtures.js';
import { paceManifest, shapeSandboxConfig } from './pace-bench.js';
import { drawJobTimes, type PaceShape } from './pace-shapes.js';
import { benchRunArgs } from './shared-bench.js';
import { cpuMs, expectExit, runCli } from './spawn-cli.js';

/**
 * The reference beside goal (b) (four runners sharing a batch, fleet-shared-bench.ts): the same
 * jobs cut into `parts` batches of their own, each with its part of the items and of the slots, its
 * own folder and its own PostgreSQL database, one runner each. Nothing is shared between them but
 * the machine and the sandbox. `together`: the runners start at one moment, as the fleet's do;
 * otherwise only the first part is run, alone on the machine. What the fleet spends beyond the
 * parts started together is what sharing the batch adds; what the parts spend beyond one runner
 * on the whole batch is what running `parts` processes, each on a part, costs with nothing shared.
 */
export interface SeparateRun {
  /** Every runner's CPU, user + system, per item of the parts run. */
  cpuMsPerItem: number;
  runnersCpuMs: number[];
}

export async function separateBatches(
  seed: number,
  parts: number,
  server: PostgresTestServer,
  shape: PaceShape,
  together: boolean,
): Promise<SeparateRun> {
  const sandbox = await startSandbox(shapeSandboxConfig(shape), { port: 0 });
  const jobs = drawJobTimes(shape, seed);
  const size = Math.ceil(shape.items / parts);
  const part: PaceShape = { ...shape, limit: Math.floor(shape.limit / parts) };
  const dirs: string[] = [];
  try {
    const runs = [];
    for (let index = 0; index < (together ? parts : 1); index += 1) {
      const own = jobs.slice(index * size, (index + 1) * size);
      const dir = benchDir(`separate-${index}`, {
        'batch.yaml': paceManifest({ ...part, items: own.length }, own, `bench-part-${index + 1}`),
      });
      dirs.push(dir);
      const url = await server.createDatabase('bench_part');
      runs.push({ dir, items: own.length, args: benchRunArgs(sandbox.baseUrl, url) });
    }
    const done = await Promise.all(
      runs.map((run) => runCli(run.args, { cwd: run.dir, env: cliEnv(sandbox), timeoutMs: 1_800_000 })),
    );
    for (const [index, cli] of done.entries())
      expectExit(cli, 0, `separate batch ${index + 1}/${runs.length}`);
    const runnersCpuMs = done.map((cli) => cpuMs(cli.stats));
    const items = runs.reduce((total, run) => total + run.items, 0);
    return { cpuMsPerItem: runnersCpuMs.reduce((total, cpu) => total + cpu, 0) / items, runnersCpuMs };
  } finally {
    await sandbox.close();
    for (const dir of dirs) removeDir(dir);
  }
}
