import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { type PostgresTestServer, psql, startPostgresServer } from '../support/postgres-server.js';
import { benchDir, benchSandboxConfig, cliEnv, lastSavedAt, removeDir } from './fixtures.js';
import { type CpuWindow, machineCpu } from './machine-cpu.js';
import { type ClientFigures, clientFigures, paceManifest, recordedDurationsMs } from './pace-bench.js';
import { drawJobTimes, type PaceShape } from './pace-shapes.js';
import { zeroLagMakespanMs } from './pace-sim.js';
import { listPollerRequests, pollingMakespanMs } from './poll-bound.js';
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
/** GET /jobs pages of mediabatch's looks (src/runner/watch.ts): the request bound's page size. */
const LIST_PAGE = 100;

export interface RunnerFigures {
  /** Spawn to exit. */
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
  /** Statements sent to the ledger's database (child-stats.mjs); null on SQLite. */
  roundTrips: number | null;
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
}

export interface SharedSample {
  seed: number;
  items: number;
  zeroLagMs: number;
  /** Busy time / 200 / the best makespan of any 1 s list poller on these jobs. */
  listPollerUtilisation: number;
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

type Bounds = Pick<SharedSample, 'zeroLagMs' | 'listPollerUtilisation' | 'listPollerRequestsPerItem'>;

/** `runners` processes on one batch, on SQLite (`server` null) or on a fresh PostgreSQL database. */
async function sharedRun(
  seed: number,
  runners: number,
  server: PostgresTestServer | null,
): Promise<{ run: SharedRun; bounds: Bounds }> {
  const config = benchSandboxConfig(SHARED.limit, {
    queued_seconds: SHARED.queued,
    running_seconds: SHARED.running,
    retry_after_seconds: SHARED.retryAfterSeconds,
  });
  const sandbox = await startSandbox(config, { port: 0 });
  const dir = benchDir(`shared-${seed}`, {
    'batch.yaml': paceManifest(SHARED, drawJobTimes(SHARED, seed), BATCH),
  });
  try {
    const url = server === null ? null : await server.createDatabase('bench_shared');
    const ledger = url === null ? [] : ['--ledger', url];
    const args = [
      'run',
      'batch.yaml',
      '--base-url',
      sandbox.baseUrl,
      '--poll-interval',
      '1',
      ...ledger,
      '--json',
    ];
    const serverBefore = serverCpuSeconds(server);
    const sandboxBefore = process.cpuUsage();
    const window = machineCpu();
    const done = await Promise.all(
      Array.from({ length: runners }, () =>
        runCli(args, { cwd: dir, env: cliEnv(sandbox), discardStdout: false, timeoutMs: 600_000 }),
      ),
    );
    const machine = window.end();
    const sandboxCpu = process.cpuUsage(sandboxBefore);
    const serverCpuS = serverCpuSeconds(server) - serverBefore;
    for (const [index, cli] of done.entries())
      expectExit(cli, 0, `shared run, runner ${index + 1}/${runners}`);
    const lastSaved =
      url === null ? lastSavedAt(join(dir, '.mediabatch', `${BATCH}.sqlite`)) : await pgLastSavedAt(url);
    const limits = bounds(sandbox);
    return {
      run: {
        ledger: url === null ? 'sqlite' : 'postgres',
        runners: done.map(runnerFigures),
        client: clientFigures(sandbox, SHARED, lastSaved, limits.zeroLagMs, SHARED.retryAfterSeconds * 1000),
        roundTripsPerItem:
          url === null ? null : sum(done.map((cli) => cli.stats.ledgerRoundTrips ?? 0)) / SHARED.items,
        cpuMsPerItem: sum(done.map((cli) => cpuMs(cli.stats))) / SHARED.items,
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

/** The physical limits of the jobs the sandbox recorded: zero lag, and any 1 s list poller. */
function bounds(sandbox: SandboxHandle): Bounds {
  const durations = recordedDurationsMs(sandbox, SHARED.items);
  const interval = SHARED.retryAfterSeconds * 1000;
  const ideal = sum(durations) / SHARED.limit;
  return {
    zeroLagMs: zeroLagMakespanMs(SHARED.limit, durations),
    listPollerUtilisation: ideal / pollingMakespanMs(durations, SHARED.limit, interval, 'list'),
    listPollerRequestsPerItem:
      listPollerRequests(durations, SHARED.limit, interval, LIST_PAGE) / SHARED.items,
  };
}

function runnerFigures(cli: CliRun): RunnerFigures {
  return {
    wallMs: cli.wallMs,
    cpuMs: cpuMs(cli.stats),
    peakRssMb: rssMb(cli.stats),
    roundTrips: cli.stats.ledgerRoundTrips,
  };
}

/** The moment the last file of the batch was committed as saved in the shared ledger. */
async function pgLastSavedAt(url: string): Promise<number> {
  const [at, count] = (await psql(url, 'SELECT MAX(saved_at), COUNT(*) FROM files')).split('|');
  if (Number(count) !== SHARED.items)
    throw new Error(`the shared ledger saved ${count} files, not ${SHARED.items}`);
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
