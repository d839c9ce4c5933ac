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
import { runNaiveClient } from './naive-client.js';
import { maxInWindow } from './request-windows.js';
import { requestMix } from './slot-bench.js';
import { expectExit, runCli } from './spawn-cli.js';

/**
 * Scenarios 6 and 7: the service at its documented pace (Retry-After 10 s, jobs of 15 to 30 s,
 * concurrency limit 3, 9 items, no --poll-interval: mediabatch learns the pace from the service),
 * and the same batch with every time divided by 10. mediabatch and the naive client run side by
 * side, each against its own sandbox, with job durations pinned by the `[[run:<s>]]` marker so
 * both get exactly the same jobs. Scenario 8 is the wide case: 200 slots, jobs of 0.6 to 1.8 s,
 * --poll-interval 1, mediabatch alone.
 */
export interface PaceCase {
  name: string;
  items: number;
  limit: number;
  /** Job duration range, seconds (queued time is zero: the whole duration is running). */
  minSeconds: number;
  maxSeconds: number;
  retryAfterSeconds: number;
  /** The run's --poll-interval; null lets mediabatch learn it from the service. */
  pollIntervalSeconds: number | null;
  withNaive: boolean;
}

export const DOCUMENTED_PACE: PaceCase = {
  name: 'pace',
  items: 9,
  limit: 3,
  minSeconds: 15,
  maxSeconds: 30,
  retryAfterSeconds: 10,
  pollIntervalSeconds: null,
  withNaive: true,
};

/** Everything ten times faster; the 10 s request window shrinks with it to 1 s. */
export const SCALED_PACE: PaceCase = {
  ...DOCUMENTED_PACE,
  name: 'pace/10',
  minSeconds: 1.5,
  maxSeconds: 3,
  retryAfterSeconds: 1,
};

export const WIDE_SLOTS: PaceCase = {
  name: 'wide',
  items: 1000,
  limit: 200,
  minSeconds: 0.6,
  maxSeconds: 1.8,
  retryAfterSeconds: 1,
  pollIntervalSeconds: 1,
  withNaive: false,
};

export interface ClientFigures {
  /** Sum over jobs of (completedAt - createdAt) / limit, from the sandbox's records. */
  idealMs: number;
  /** First POST (sandbox record) to the last file saved. */
  makespanMs: number;
  utilisation: number;
  requests: number;
  /** Most API requests in any window of 10 s (scaled with the case's Retry-After). */
  maxInWindow: number;
  mix: Record<string, number>;
}

export interface PaceSample {
  seed: number;
  items: number;
  /** The floor for any client: the account read, one POST per job, one list call per finish. */
  minRequests: number;
  windowMs: number;
  cli: ClientFigures;
  naive: ClientFigures | null;
}

/** Seconds of every item's job, pinned from a seeded PRNG, three decimals. */
export function paceDurations(pace: PaceCase, seed: number): number[] {
  const random = seededRandom(seed);
  const span = pace.maxSeconds - pace.minSeconds;
  return Array.from(
    { length: pace.items },
    () => Math.round((pace.minSeconds + span * random()) * 1000) / 1000,
  );
}

const prompt = (index: number, seconds: number) =>
  `Pace shot ${index + 1}, a lighthouse beam over a calm sea [[run:${seconds}]]`;

function manifest(pace: PaceCase, seconds: number[]): string {
  const items = seconds.map(
    (value, index) =>
      `  - id: shot-${String(index + 1).padStart(4, '0')}\n    prompt: "${prompt(index, value)}"`,
  );
  return `version: 1\nname: bench-pace\ninput: {seconds: 2, definition: 480p}\nconcurrency: ${pace.limit}\nitems:\n${items.join('\n')}\n`;
}

function figures(sandbox: SandboxHandle, pace: PaceCase, lastSaved: number, windowMs: number): ClientFigures {
  const { jobs } = sandbox.records();
  if (jobs.length !== pace.items)
    throw new Error(`expected ${pace.items} jobs, the sandbox has ${jobs.length}`);
  let busy = 0;
  for (const job of jobs) {
    if (job.completedAt === null) throw new Error(`job ${job.id} did not complete`);
    busy += Date.parse(job.completedAt) - Date.parse(job.createdAt);
  }
  const idealMs = busy / pace.limit;
  const makespanMs = lastSaved - firstPostAt(sandbox);
  const requests = apiRequests(sandbox);
  return {
    idealMs,
    makespanMs,
    utilisation: idealMs / makespanMs,
    requests: requests.length,
    maxInWindow: maxInWindow(
      requests.map((request) => request.at),
      windowMs,
    ),
    mix: requestMix(sandbox),
  };
}

export async function paceRun(pace: PaceCase, seed: number): Promise<PaceSample> {
  const seconds = paceDurations(pace, seed);
  const config = benchSandboxConfig(pace.limit, {
    queued_seconds: 0,
    running_seconds: { min: pace.minSeconds, max: pace.maxSeconds },
    retry_after_seconds: pace.retryAfterSeconds,
  });
  const windowMs = pace.retryAfterSeconds * 1000;
  const forCli = await startSandbox(config, { port: 0 });
  const forNaive = pace.withNaive ? await startSandbox(config, { port: 0 }) : null;
  const dir = benchDir(pace.name.replace('/', '-'), { 'batch.yaml': manifest(pace, seconds) });
  const poll = pace.pollIntervalSeconds === null ? [] : ['--poll-interval', String(pace.pollIntervalSeconds)];
  try {
    const [cli, naive] = await Promise.all([
      runCli(['run', 'batch.yaml', '--base-url', forCli.baseUrl, ...poll, '--json'], {
        cwd: dir,
        env: cliEnv(forCli),
        timeoutMs: 600_000,
      }),
      forNaive === null
        ? null
        : runNaiveClient({
            baseUrl: forNaive.baseUrl,
            apiKey: BENCH_KEY,
            bodies: seconds.map((value, index) => ({
              input: { prompt: prompt(index, value), seconds: 2, definition: '480p' },
            })),
            outDir: join(dir, 'naive-out'),
            retryAfterSeconds: pace.retryAfterSeconds,
          }),
    ]);
    expectExit(cli, 0, `${pace.name} run`);
    const report = JSON.parse(cli.stdout) as { totals: { done: number } };
    if (report.totals.done !== pace.items) throw new Error(`only ${report.totals.done} items done`);
    if (naive !== null && naive.succeeded !== pace.items) {
      throw new Error(`naive client: ${naive.succeeded} succeeded`);
    }
    const ledger = join(dir, '.mediabatch', 'bench-pace.sqlite');
    return {
      seed,
      items: pace.items,
      minRequests: 1 + 2 * pace.items,
      windowMs,
      cli: figures(forCli, pace, lastSavedAt(ledger), windowMs),
      naive:
        forNaive === null || naive === null ? null : figures(forNaive, pace, naive.lastSavedAt, windowMs),
    };
  } finally {
    await forCli.close();
    await forNaive?.close();
    removeDir(dir);
  }
}
