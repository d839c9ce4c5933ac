import { join } from 'node:path';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { seededRandom } from '../support/seeded-random.js';
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
import { type NaiveJobBody, runNaiveClient } from './naive-client.js';
import { expectExit, runCli } from './spawn-cli.js';

/**
 * Scenarios 1 and 2: 60 items, account limit 3, jobs queued 0.1 s then running 2 to 4 s, poll
 * interval 1 s. The running time of every item is pinned with the sandbox's `[[run:<s>]]` prompt
 * marker from a seeded PRNG, so mediabatch and the naive client get exactly the same jobs (job
 * durations would otherwise be drawn from each request's random Idempotency-Key).
 */
export const SLOT_ITEMS = 60;
export const SLOT_LIMIT = 3;
const QUEUED_SECONDS = 0.1;
export const RETRY_AFTER_SECONDS = 1;

export interface SlotSample {
  /** Sum over jobs of (completedAt - createdAt) / limit, from the sandbox's records. */
  idealMs: number;
  /** First POST (sandbox record) to the last file committed as saved (ledger files.saved_at). */
  makespanMs: number;
  /** The CLI process, spawn to exit. */
  wallMs: number;
  utilisation: number;
  requestsPerJob: number;
  /** API requests by kind, e.g. {"POST /v1/videos/generation": 60}. */
  mix: Record<string, number>;
  naive: {
    idealMs: number;
    makespanMs: number;
    utilisation: number;
    requestsPerJob: number;
    mix: Record<string, number>;
  };
}

/** Queued plus running time of every item, as the sandbox will schedule them. */
export function slotDurationsMs(): number[] {
  return runSeconds().map((seconds) => Math.round((QUEUED_SECONDS + seconds) * 1000));
}

function runSeconds(): number[] {
  const random = seededRandom(20240601);
  return Array.from({ length: SLOT_ITEMS }, () => Math.round((2 + 2 * random()) * 1000) / 1000);
}

function prompt(index: number, seconds: number): string {
  return `Bench shot ${index + 1}, a slow pan over a harbour [[run:${seconds}]]`;
}

function manifest(seconds: number[]): string {
  const items = seconds.map(
    (value, index) =>
      `  - id: shot-${String(index + 1).padStart(2, '0')}\n    prompt: "${prompt(index, value)}"`,
  );
  return `version: 1\nname: bench-slots\ninput: {seconds: 2, definition: 480p}\nitems:\n${items.join('\n')}\n`;
}

function naiveBodies(seconds: number[]): NaiveJobBody[] {
  return seconds.map((value, index) => ({
    input: { prompt: prompt(index, value), seconds: 2, definition: '480p' },
  }));
}

function idealMs(sandbox: SandboxHandle, limit: number): number {
  const { jobs } = sandbox.records();
  if (jobs.length !== SLOT_ITEMS)
    throw new Error(`expected ${SLOT_ITEMS} jobs, the sandbox has ${jobs.length}`);
  let busy = 0;
  for (const job of jobs) {
    if (job.completedAt === null) throw new Error(`job ${job.id} did not complete`);
    busy += Date.parse(job.completedAt) - Date.parse(job.createdAt);
  }
  return busy / limit;
}

/**
 * One run of each client, side by side, each against its own sandbox with the same seed and
 * config. They share the machine but not a workspace, so neither takes the other's slots.
 */
export async function slotRun(): Promise<SlotSample> {
  const seconds = runSeconds();
  const config = benchSandboxConfig(SLOT_LIMIT, {
    queued_seconds: QUEUED_SECONDS,
    running_seconds: { min: 2, max: 4 },
    retry_after_seconds: RETRY_AFTER_SECONDS,
  });
  const forCli = await startSandbox(config, { port: 0 });
  const forNaive = await startSandbox(config, { port: 0 });
  const dir = benchDir('slots', { 'batch.yaml': manifest(seconds) });
  try {
    const [cli, naive] = await Promise.all([
      runCli(
        [
          'run',
          'batch.yaml',
          '--base-url',
          forCli.baseUrl,
          '--poll-interval',
          String(RETRY_AFTER_SECONDS),
          '--json',
        ],
        { cwd: dir, env: cliEnv(forCli), timeoutMs: 240_000 },
      ),
      runNaiveClient({
        baseUrl: forNaive.baseUrl,
        apiKey: BENCH_KEY,
        bodies: naiveBodies(seconds),
        outDir: join(dir, 'naive-out'),
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      }),
    ]);
    expectExit(cli, 0, 'slot run');
    const report = JSON.parse(cli.stdout) as { totals: { done: number } };
    if (report.totals.done !== SLOT_ITEMS) throw new Error(`only ${report.totals.done} items done`);
    if (naive.succeeded !== SLOT_ITEMS) throw new Error(`naive client: ${naive.succeeded} succeeded`);

    const ideal = idealMs(forCli, SLOT_LIMIT);
    const makespan = lastSavedAt(join(dir, '.mediabatch', 'bench-slots.sqlite')) - firstPostAt(forCli);
    const naiveIdeal = idealMs(forNaive, SLOT_LIMIT);
    const naiveMakespan = naive.lastSavedAt - firstPostAt(forNaive);
    return {
      idealMs: ideal,
      makespanMs: makespan,
      wallMs: cli.wallMs,
      utilisation: ideal / makespan,
      requestsPerJob: apiRequests(forCli).length / SLOT_ITEMS,
      mix: requestMix(forCli),
      naive: {
        idealMs: naiveIdeal,
        makespanMs: naiveMakespan,
        utilisation: naiveIdeal / naiveMakespan,
        requestsPerJob: apiRequests(forNaive).length / SLOT_ITEMS,
        mix: requestMix(forNaive),
      },
    };
  } finally {
    await forCli.close();
    await forNaive.close();
    removeDir(dir);
  }
}

/** Requests of one client by kind, for the report (e.g. "POST /v1/videos/generation": 60). */
export function requestMix(sandbox: SandboxHandle): Record<string, number> {
  const mix: Record<string, number> = {};
  for (const request of apiRequests(sandbox)) {
    const path = request.path.replace(/\/job_[0-9a-f]+$/, '/{id}');
    const key = `${request.method} ${path}`;
    mix[key] = (mix[key] ?? 0) + 1;
  }
  return mix;
}
