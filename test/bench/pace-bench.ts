import { join } from 'node:path';
import { type SandboxConfigInput, type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import {
  apiRequests,
  BENCH_KEY,
  benchDir,
  benchSandboxConfig,
  cliEnv,
  firstPostAt,
  lastSavedAt,
  removeDir,
} from './fixtures.js';
import { runNaiveClient } from './naive-client.js';
import { drawJobTimes, type JobTimes, type PaceShape } from './pace-shapes.js';
import { zeroLagMakespanMs } from './pace-sim.js';
import { maxInWindow } from './request-windows.js';
import { requestMix } from './slot-bench.js';
import { expectExit, runCli } from './spawn-cli.js';

/**
 * The pace scenarios: one draw of job durations of a shape (pace-shapes.ts) played by mediabatch
 * and by the naive client side by side, each against its own sandbox, with every job's queued and
 * running time pinned by the sandbox's `[[queued:<s>]]` and `[[run:<s>]]` prompt markers so both
 * get exactly the same jobs; beside them the zero-lag limit of the same durations.
 */
export interface ClientFigures {
  /** First POST (sandbox record) to the last file saved. */
  makespanMs: number;
  /** Makespan / the zero-lag limit of the draw. */
  ratio: number;
  /** Sum of job durations / limit / makespan. */
  utilisation: number;
  requests: number;
  /** Most API requests in any window of one Retry-After. */
  maxInWindow: number;
  mix: Record<string, number>;
}

export interface PaceSample {
  shape: string;
  seed: number;
  items: number;
  /** The same durations, in creation order, placed greedily with every finish seen at once. */
  zeroLagMs: number;
  windowMs: number;
  cli: ClientFigures;
  naive: ClientFigures | null;
}

const prompt = (index: number, job: JobTimes) =>
  `Pace shot ${index + 1}, a lighthouse beam over a calm sea [[queued:${job.queuedSeconds}]] [[run:${job.runningSeconds}]]`;

/** The manifest of a draw: one item per job, its times pinned by the prompt's markers. */
export function paceManifest(shape: PaceShape, jobs: JobTimes[], name = 'bench-pace'): string {
  const items = jobs.map(
    (job, index) => `  - id: shot-${String(index + 1).padStart(4, '0')}\n    prompt: "${prompt(index, job)}"`,
  );
  return `version: 1\nname: ${name}\ninput: {seconds: 2, definition: 480p}\nconcurrency: ${shape.limit}\nitems:\n${items.join('\n')}\n`;
}

/** Job durations as the sandbox recorded them, in creation order. */
export function recordedDurationsMs(sandbox: SandboxHandle, items: number): number[] {
  const { jobs } = sandbox.records();
  if (jobs.length !== items) throw new Error(`expected ${items} jobs, the sandbox has ${jobs.length}`);
  return jobs.map((job) => {
    if (job.completedAt === null) throw new Error(`job ${job.id} did not complete`);
    return Date.parse(job.completedAt) - Date.parse(job.createdAt);
  });
}

/** One client's figures on its sandbox, its last file saved at `lastSaved` (epoch ms). */
export function clientFigures(
  sandbox: SandboxHandle,
  shape: PaceShape,
  lastSaved: number,
  zeroLagMs: number,
  windowMs: number,
): ClientFigures {
  const busy = recordedDurationsMs(sandbox, shape.items).reduce((sum, value) => sum + value, 0);
  const makespanMs = lastSaved - firstPostAt(sandbox);
  const requests = apiRequests(sandbox);
  return {
    makespanMs,
    ratio: makespanMs / zeroLagMs,
    utilisation: busy / shape.limit / makespanMs,
    requests: requests.length,
    maxInWindow: maxInWindow(
      requests.map((request) => request.at),
      windowMs,
    ),
    mix: requestMix(sandbox),
  };
}

/** A sandbox playing `shape`'s jobs: its slots, its queued and running times, its Retry-After. */
export function shapeSandboxConfig(shape: PaceShape): SandboxConfigInput {
  return benchSandboxConfig(shape.limit, {
    queued_seconds: shape.queued,
    running_seconds: shape.running,
    retry_after_seconds: shape.retryAfterSeconds,
  });
}

/** One draw: mediabatch (and the naive client unless `alone`) on the jobs of `seed`. */
export async function paceRun(shape: PaceShape, seed: number, alone = false): Promise<PaceSample> {
  const jobs = drawJobTimes(shape, seed);
  const config = shapeSandboxConfig(shape);
  const windowMs = shape.retryAfterSeconds * 1000;
  const forCli = await startSandbox(config, { port: 0 });
  const forNaive = alone ? null : await startSandbox(config, { port: 0 });
  const dir = benchDir(`pace-${seed}`, { 'batch.yaml': paceManifest(shape, jobs) });
  const poll =
    shape.pollIntervalSeconds === null ? [] : ['--poll-interval', String(shape.pollIntervalSeconds)];
  try {
    const [cli, naive] = await Promise.all([
      runCli(['run', 'batch.yaml', '--base-url', forCli.baseUrl, ...poll, '--json'], {
        cwd: dir,
        env: cliEnv(forCli),
        timeoutMs: 900_000,
      }),
      forNaive === null
        ? null
        : runNaiveClient({
            baseUrl: forNaive.baseUrl,
            apiKey: BENCH_KEY,
            bodies: jobs.map((job, index) => ({
              input: { prompt: prompt(index, job), seconds: 2, definition: '480p' },
            })),
            outDir: join(dir, 'naive-out'),
            retryAfterSeconds: shape.retryAfterSeconds,
          }),
    ]);
    expectExit(cli, 0, `${shape.name} run`);
    const report = JSON.parse(cli.stdout) as { totals: { done: number } };
    if (report.totals.done !== shape.items) throw new Error(`only ${report.totals.done} items done`);
    if (naive !== null && naive.succeeded !== shape.items) {
      throw new Error(`naive client: ${naive.succeeded} succeeded`);
    }
    const zeroLagMs = zeroLagMakespanMs(shape.limit, recordedDurationsMs(forCli, shape.items));
    const ledger = join(dir, '.mediabatch', 'bench-pace.sqlite');
    return {
      shape: shape.name,
      seed,
      items: shape.items,
      zeroLagMs,
      windowMs,
      cli: clientFigures(forCli, shape, lastSavedAt(ledger), zeroLagMs, windowMs),
      naive:
        forNaive === null || naive === null
          ? null
          : clientFigures(forNaive, shape, naive.lastSavedAt, zeroLagMs, windowMs),
    };
  } finally {
    await forCli.close();
    await forNaive?.close();
    removeDir(dir);
  }
}
