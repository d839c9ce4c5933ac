import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { type PostgresTestServer, psql, startPostgresServer } from '../support/postgres-server.js';
import { benchDir, cliEnv, lastSavedAt, removeDir } from './fixtures.js';
import { type CpuWindow, machineCpu } from './machine-cpu.js';
import {
  type ClientFigures,
  clientFigures,
  paceManifest,
  recordedDurationsMs,
  shapeSandboxConfig,
} from './pace-bench.js';
import { drawJobTimes, type PaceShape } from './pace-shapes.js';
import { zeroLagMakespanMs } from './pace-sim.js';
import { listPollerRequests } from './poll-bound.js';
import { type CliRun, cpuMs, expectExit, rssMb, runCli } from './spawn-cli.js';

/**
 * Scenario 13: several runners on one shared ledger. The same 1,200 jobs (200 slots, 0.6-1.8 s,
 * pinned by the prompts' markers) worked three ways, each against its own fresh sandbox:
 * - one runner on the default SQLite ledger;
 * - one runner on a PostgreSQL ledger (the reference of the goals);
 * - four runners started together on the same manifest, output folder and PostgreSQL database.
 * The manifest's `concurrency: 200` is the batch's total: the shared ledger admits at most that many
 * unfinished jobs across all runners, so the issue's "four runners of 50" is four runners sharing
 * 200, each taking what the others leave. Every PostgreSQL run gets a fresh database.
 */
export const SHARED: PaceShape = {
  name: 'shared 200 slots',
  items: 1200,
  limit: 200,
  queued: 0,
  running: { min: 0.6, max: 1.8 },
  retryAfterSeconds: 1,
  pollIntervalSeconds: 1,
};
export const SHARED_RUNNERS = 4;
const BATCH = 'bench-shared';
/**
 * How long runners may take to end on their own once the batch's last file is saved: a runner
 * waiting on another's items sees them finished at its next lease renewal (every 10 s with the
 * default 30 s lease), plus a margin. One still running then is stopped with SIGINT (it drains
 * and ends, as on Ctrl-C), so that its figures are still reported; the rows count them.
 */
const GRACE_MS = 15_000;
/** GET /jobs pages of mediabatch's looks (src/runner/watch.ts): the request bound's page size. */
const LIST_PAGE = 100;

export interface RunnerFigures {
  /** Spawn to exit. */
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
  /** Statements sent to the ledger's database (child-stats.mjs); null on SQLite. */
  roundTrips: number | null;
  /** Exit minus the batch's last file saved. */
  endedAfterLastSaveMs: number;
  /** Still running GRACE_MS after the batch's last file was saved: stopped with SIGINT. */
  interrupted: boolean;
}

export interface SharedRun {
  ledger: 'sqlite' | 'postgres';
  runners: RunnerFigures[];
  /** Makespan (first POST -> last file saved), utilisation, requests, from the sandbox's records. */
  client: ClientFigures;
  roundTripsPerItem: number | null;
  /** Every runner's CPU, user + system, per item. */
  cpuMsPerItem: number;
  /** CPU of the PostgreSQL server over the run (postmaster and its backends); NaN without one. */
  serverCpuS: number;
  /** CPU of the bench process over the run: the sandbox serving every request and file. */
  sandboxCpuS: number;
  machine: CpuWindow;
  /** Runners that stopped at their start on another's start-up files and were started again. */
  restarts: number;
}

export interface SharedSample {
  seed: number;
  items: number;
  zeroLagMs: number;
  /** Busy time / 200 / the zero-lag limit: the utilisation no client can beat on these jobs. */
  zeroLagUtilisation: number;
  /** The fewest requests per item of such a poller (poll-bound.ts). */
  listPollerRequestsPerItem: number;
  sqlite: SharedRun;
  single: SharedRun;
  four: SharedRun;
}

/** Seeds of the job draws: each sample plays all three ways on the jobs of its seed. */
const FIRST_SEED = 7101;

export async function sharedSamples(runs: number, log: (message: string) => void): Promise<SharedSample[]> {
  const server = await startPostgresServer();
  try {
    const samples: SharedSample[] = [];
    for (let i = 0; i < runs; i += 1) {
      const seed = FIRST_SEED + i;
      const label = `shared: run ${i + 1}/${runs}, ${SHARED.items} items, limit ${SHARED.limit}`;
      log(`${label}: one runner on SQLite`);
      const sqlite = await sharedRun(seed, 1, null);
      log(`${label}: one runner on PostgreSQL`);
      const single = await sharedRun(seed, 1, server);
      log(`${label}: ${SHARED_RUNNERS} runners on one PostgreSQL ledger`);
      const four = await sharedRun(seed, SHARED_RUNNERS, server);
      samples.push({
        seed,
        items: SHARED.items,
        ...sqlite.bounds,
        sqlite: sqlite.run,
        single: single.run,
        four: four.run,
      });
    }
    return samples;
  } finally {
    await server.stop();
  }
}

type Bounds = Pick<SharedSample, 'zeroLagMs' | 'zeroLagUtilisation' | 'listPollerRequestsPerItem'>;

/**
 * `runners` processes on one batch, on SQLite (`server` null) or on a fresh PostgreSQL database;
 * `shape` the jobs (scenario 13's by default; `fleet` plays 10,000 of them).
 */
export async function sharedRun(
  seed: number,
  runners: number,
  server: PostgresTestServer | null,
  shape: PaceShape = SHARED,
): Promise<{ run: SharedRun; bounds: Bounds }> {
  const sandbox = await startSandbox(shapeSandboxConfig(shape), { port: 0 });
  const dir = benchDir(`shared-${seed}`, {
    'batch.yaml': paceManifest(shape, drawJobTimes(shape, seed), BATCH),
  });
  try {
    const url = server === null ? null : await server.createDatabase('bench_shared');
    const args = benchRunArgs(sandbox.baseUrl, url);
    const serverBefore = serverCpuSeconds(server);
    const sandboxBefore = process.cpuUsage();
    const window = machineCpu();
    let interrupt = () => {};
    const interrupted = new Promise<void>((resolve) => {
      interrupt = resolve;
    });
    let over = false;
    const running = Promise.all(
      Array.from({ length: runners }, () =>
        startedAgainOnCollision(() =>
          runCli(args, { cwd: dir, env: cliEnv(sandbox), timeoutMs: 1_800_000, interrupt: interrupted }),
        ),
      ),
    ).finally(() => {
      over = true;
    });
    if (url !== null) await batchSavedThenGrace(url, shape.items, () => over).finally(interrupt);
    const done = (await running).map(({ cli }) => cli);
    const restarts = sum((await running).map((runner) => runner.restarts));
    const machine = window.end();
    const sandboxCpu = process.cpuUsage(sandboxBefore);
    const serverCpuS = serverCpuSeconds(server) - serverBefore;
    for (const [index, cli] of done.entries())
      expectExit(cli, 0, `shared run, runner ${index + 1}/${runners}`);
    const lastSaved =
      url === null
        ? lastSavedAt(join(dir, '.mediabatch', `${BATCH}.sqlite`))
        : await pgLastSavedAt(url, shape.items);
    const limits = bounds(sandbox, shape);
    return {
      run: {
        ledger: url === null ? 'sqlite' : 'postgres',
        runners: done.map((cli) => runnerFigures(cli, lastSaved)),
        restarts,
        client: clientFigures(sandbox, shape, lastSaved, limits.zeroLagMs, shape.retryAfterSeconds * 1000),
        roundTripsPerItem:
          url === null ? null : sum(done.map((cli) => cli.stats.ledgerRoundTrips ?? 0)) / shape.items,
        cpuMsPerItem: sum(done.map((cli) => cpuMs(cli.stats))) / shape.items,
        serverCpuS,
        sandboxCpuS: (sandboxCpu.user + sandboxCpu.system) / 1e6,
        machine,
      },
      bounds: limits,
    };
  } finally {
    await sandbox.close();
    removeDir(dir);
  }
}

/** A runner's command line: its folder's manifest on this sandbox, polled each second, on `ledger` (null: SQLite). */
export function benchRunArgs(baseUrl: string, ledger: string | null): string[] {
  const on = ledger === null ? [] : ['--ledger', ledger];
  return ['run', 'batch.yaml', '--base-url', baseUrl, '--poll-interval', '1', ...on, '--json'];
}

/**
 * The physical limits of the jobs the sandbox recorded: every finish seen at once (zero lag), and
 * the fewest requests of a poller that lists them once a second (poll-bound.ts).
 */
function bounds(sandbox: SandboxHandle, shape: PaceShape): Bounds {
  const durations = recordedDurationsMs(sandbox, shape.items);
  const interval = shape.retryAfterSeconds * 1000;
  const zeroLagMs = zeroLagMakespanMs(shape.limit, durations);
  return {
    zeroLagMs,
    zeroLagUtilisation: sum(durations) / shape.limit / zeroLagMs,
    listPollerRequestsPerItem: listPollerRequests(durations, shape.limit, interval, LIST_PAGE) / shape.items,
  };
}

function runnerFigures(cli: CliRun, lastSaved: number): RunnerFigures {
  return {
    wallMs: cli.wallMs,
    cpuMs: cpuMs(cli.stats),
    peakRssMb: rssMb(cli.stats),
    roundTrips: cli.stats.ledgerRoundTrips,
    endedAfterLastSaveMs: cli.endedAt - lastSaved,
    interrupted: cli.interrupted,
  };
}

/** How often a runner that collided at its start is started again. */
const MAX_RESTARTS = 3;

/**
 * Runners started at the same moment on one output folder can stop one another before sending
 * anything: each removes the temporary files it finds there at its start (removeTempFiles in
 * src/downloads/verify-file.ts), the others' write probes among them, and the probe whose file
 * vanished reports the folder unable to take files (exit 2, "nothing was submitted"). Such a
 * runner is started again, up to MAX_RESTARTS times, and counted: the rows show how often.
 */
async function startedAgainOnCollision(
  start: () => Promise<CliRun>,
): Promise<{ cli: CliRun; restarts: number }> {
  for (let restarts = 0; ; restarts += 1) {
    const cli = await start();
    const collided = cli.code === 2 && cli.stderr.includes('nothing was submitted');
    if (!collided || restarts === MAX_RESTARTS) return { cli, restarts };
  }
}

/** Resolves GRACE_MS after every file of the batch is saved in the shared ledger, or once `over`. */
async function batchSavedThenGrace(url: string, items: number, over: () => boolean): Promise<void> {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  // Before the first runner made the schema there is no table to count.
  const saved = () => psql(url, 'SELECT COUNT(*) FROM files').then(Number, () => 0);
  while (!over() && (await saved()) < items) await pause(1000);
  const until = Date.now() + GRACE_MS;
  while (!over() && Date.now() < until) await pause(250);
}

/** The moment the last file of the batch was committed as saved in the shared ledger. */
async function pgLastSavedAt(url: string, items: number): Promise<number> {
  const [at, count] = (await psql(url, 'SELECT MAX(saved_at), COUNT(*) FROM files')).split('|');
  if (Number(count) !== items) throw new Error(`the shared ledger saved ${count} files, not ${items}`);
  return Date.parse(at!);
}

/** Clock ticks per second of /proc's CPU times. */
const USER_HZ = 100;

/**
 * CPU seconds used so far by the cluster: the postmaster's own and those of its children it
 * reaped (backends of closed connections), and the living backends'. NaN when /proc or the
 * cluster's folder cannot be read (an external server).
 */
function serverCpuSeconds(server: PostgresTestServer | null): number {
  if (server?.dataDir == null) return Number.NaN;
  try {
    const postmaster = readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]!.trim();
    let ticks = 0;
    for (const pid of [postmaster, ...childrenOf(postmaster)]) {
      const fields = statFields(pid);
      if (fields === null) continue;
      // utime, stime (fields 14, 15) and, for the postmaster, cutime and cstime of reaped children.
      ticks += Number(fields[11]) + Number(fields[12]);
      if (pid === postmaster) ticks += Number(fields[13]) + Number(fields[14]);
    }
    return ticks / USER_HZ;
  } catch {
    return Number.NaN;
  }
}

/** /proc/<pid>/stat's fields after the command name (the state is [0]); null if gone. */
function statFields(pid: string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function childrenOf(parent: string): string[] {
  return readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && statFields(pid)?.[1] === parent);
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
