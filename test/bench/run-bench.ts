/**
 * `npm run bench`: builds the CLI, runs every scenario against in-process sandboxes, prints one
 * table (median, min and max of the runs) and writes it, with every sample, to
 * test/bench/results.json (a run of named scenarios to results.<names>.json, which git ignores).
 * Pass scenario names to run only some: `writes slots scale large pace wide
 * export view gallery checks`. `s3` runs only when named (`npm run bench -- s3`): it needs Swift (see
 * test/support/s3-server.ts) and takes five to ten minutes on its own. `shared` too runs only when
 * named (`npm run bench -- shared`): it needs PostgreSQL (test/support/postgres-server.ts) and
 * takes a few minutes. `gallery` needs chromium. `refresh` (the gallery a run refreshes, at 100,000
 * items) runs only when named, about two minutes. `paths` (the user paths model over 40 sequences,
 * test/e2e/paths/) runs only when named, some twenty minutes. `checks-cost` (10,000 items with the
 * built-in check on and off, alternating, three of each) runs only when named, a few minutes. `fleet`
 * (issue 52: a first run of 40,000 items and its audit, then 10,000 items on SQLite, PostgreSQL and
 * four runners) runs only when named, half an hour or more; `fleet-items=N` and
 * `fleet-shared-items=N` change the sizes. `flat` (issue 53: plan on a fresh ledger, status, export and
 * plan on a done one, at 100,000 and 1,000,000 items side by side, a quarter of an hour or more) and
 * `flat-rerun` (the unchanged re-run of a done 100,000-item batch, its first run included) run only
 * when named; `flat-reference=<another build's dist/cli/main.js>` runs each command by that build too,
 * right after this tree's.
 *
 * Every CLI run is a child process started through child-stats.mjs, which reports the child's own
 * getrusage figures (CPU time, peak RSS) when it exits; see there for why.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromiumMissing } from '../support/browser.js';
import {
  exportRows,
  growthRows,
  largeRows,
  pacedGrowthRows,
  paceRows,
  paceTable,
  s3Rows,
  scaleRows,
  series,
  sharedReadRows,
  sharedRows,
  single,
  slotRows,
  wideRows,
  writeRows,
} from './bench-rows.js';
import {
  BIG_COMMANDS,
  BIG_ITEMS,
  type BigSample,
  bigCommand,
  buildBigLedger,
  EXPORT_COMMANDS,
} from './big-ledger-bench.js';
import { type CheckSample, checkRows, checkRuns } from './check-bench.js';
import { type CheckCostSample, checkCostRows, checkCostRuns } from './check-cost-bench.js';
import { removeDir } from './fixtures.js';
import { type FlatRerun, flatRerun, flatRows, flatRuns } from './flat-bench.js';
import { type FirstRunSample, FLEET_ITEMS, firstRun, firstRunRows } from './fleet-first-bench.js';
import { FLEET_SHARED_ITEMS, fleetSharedRows, fleetSharedRuns } from './fleet-shared-bench.js';
import { type GallerySample, galleryRows, galleryRuns } from './gallery-bench.js';
import { refreshRows, refreshRuns } from './gallery-refresh-bench.js';
import {
  GROWTH_SIZES,
  type GrowthSample,
  growthRun,
  PACED_SEED,
  PACED_SIZES,
  type PacedGrowthSample,
  pacedGrowthRun,
} from './growth-bench.js';
import { manifestReadRows, manifestReadRuns } from './manifest-read-bench.js';
import { type PaceSample, paceRun } from './pace-bench.js';
import { PACE_SHAPES, WIDE } from './pace-shapes.js';
import { pathsRows, pathsRun } from './paths-bench.js';
import { pollingMakespanMs } from './poll-bound.js';
import { measureS3 } from './s3-scenario.js';
import { SCALE_ITEMS, scaleSamples } from './scale-bench.js';
import { sharedSamples } from './shared-bench.js';
import { sharedReadSamples } from './shared-reads-bench.js';
import {
  RETRY_AFTER_SECONDS,
  SLOT_ITEMS,
  SLOT_LIMIT,
  type SlotSample,
  slotDurationsMs,
  slotRun,
} from './slot-bench.js';
import { ROOT } from './spawn-cli.js';
import { formatTable, type Row, summarize, verdict } from './stats.js';
import { VIEW_FINISHES_PER_SECOND, VIEW_SLOTS, type ViewSample, viewRun } from './view-bench.js';
import { WRITE_CYCLES, type WriteSample, writeRateRun } from './write-rate-bench.js';

const LONG_RUNS = 3;
const CHEAP_RUNS = 5;
/** RAM-backed: the same 5,000-item run without disk syncs shows what is CPU and what is disk. */
const TMPFS = '/dev/shm';

/** `name=value` arguments are settings (`fleet-items=10000`), the others scenario names. */
const settings = new Map(
  process.argv
    .slice(2)
    .filter((arg) => arg.includes('='))
    .map((arg) => arg.split('=', 2) as [string, string]),
);
const wanted = new Set(process.argv.slice(2).filter((arg) => !arg.includes('=')));
const setting = (name: string, fallback: number): number => {
  const value = Number(settings.get(name) ?? fallback);
  if (!Number.isSafeInteger(value) || value < 100)
    throw new Error(`${name}=${settings.get(name)}: a whole number, 100 or more`);
  return value;
};
const runs = (name: string) => wanted.size === 0 || wanted.has(name);
const named = (name: string) => wanted.has(name);
const rows: Row[] = [];
const details: Record<string, unknown> = {};
const seconds = () => `${(performance.now() / 1000).toFixed(0)}s`;
const log = (message: string) => process.stderr.write(`[bench ${seconds()}] ${message}\n`);

function build(): number {
  const started = performance.now();
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
  return performance.now() - started;
}

async function writeScenario(): Promise<void> {
  log(`writes: ${CHEAP_RUNS} x ${WRITE_CYCLES} prepareAttempt + recordAccepted cycles`);
  const samples: WriteSample[] = [];
  for (let i = 0; i < CHEAP_RUNS; i += 1) samples.push(await writeRateRun());
  details.writes = samples;
  rows.push(...writeRows(samples));
}

async function slotScenarios(): Promise<void> {
  // The repetitions run side by side, each pair (mediabatch, naive client) on its own two
  // sandboxes: both clients sleep between 1 s polls, so this costs no accuracy and saves minutes.
  log(`slots: ${LONG_RUNS} x (mediabatch + naive client), ${SLOT_ITEMS} items, limit ${SLOT_LIMIT}`);
  const samples: SlotSample[] = await Promise.all(Array.from({ length: LONG_RUNS }, () => slotRun()));
  const ideal = summarize(samples.map((sample) => sample.idealMs)).median;
  const durations = slotDurationsMs();
  const interval = RETRY_AFTER_SECONDS * 1000;
  const bounds = {
    listPoller: ideal / pollingMakespanMs(durations, SLOT_LIMIT, interval, 'list'),
    perJobPoller: ideal / pollingMakespanMs(durations, SLOT_LIMIT, interval, 'per-job'),
  };
  details.slots = { samples, utilisationBounds: bounds };
  rows.push(...slotRows(samples, bounds.listPoller));
}

async function scaleScenario(root: string | undefined, label: string, withTargets: boolean): Promise<void> {
  // The temp dir's disk is shared with whatever else the machine does, and its sync latency moves
  // a lot from minute to minute: a short scenario-5 probe before each run shows what it was.
  const commitMs: number[] = [];
  const samples = await scaleSamples(root, LONG_RUNS, async (i) => {
    if (root === undefined) commitMs.push((await writeRateRun(50)).msPerCommit);
    log(`scale${label}: run ${i}/${LONG_RUNS}, ${SCALE_ITEMS} instant jobs, limit and concurrency 500`);
  });
  details[`scale${label}`] = { samples, commitMs };
  rows.push(...scaleRows(label, samples, withTargets));
  if (commitMs.length > 0) {
    rows.push(series(`3 scale${label}`, 'ledger commit time, probed before each run', 'ms', 2, commitMs));
  }
}

/** `million`: 1,000,000 items, each command once and export with them (`npm run bench -- large-1m`). */
async function largeScenario(million = false): Promise<void> {
  const items = million ? 1_000_000 : BIG_ITEMS;
  const runs = million ? 1 : LONG_RUNS;
  log(`large: building a ${items}-item JSONL manifest and its all-done ledger`);
  const big = await buildBigLedger(items);
  const commands: Record<string, BigSample[]> = {};
  details[million ? 'large1m' : 'large'] = { ledgerBytes: big.ledgerBytes, buildMs: big.buildMs, commands };
  try {
    const label = million ? '4m 1M ledger' : '4 100k ledger';
    rows.push(single(label, 'ledger size on disk', 'MB', 1, big.ledgerBytes / 1024 / 1024));
    for (const command of million ? [...BIG_COMMANDS, ...EXPORT_COMMANDS] : BIG_COMMANDS) {
      const samples: BigSample[] = [];
      for (let i = 1; i <= runs; i += 1) {
        log(`large: mediabatch ${command} (${i}/${runs})`);
        samples.push(await bigCommand(big, command));
      }
      commands[command] = samples;
      rows.push(...largeRows(command, samples, million));
    }
  } finally {
    removeDir(big.dir);
  }
}

async function exportScenario(): Promise<void> {
  log(`export: building a ${BIG_ITEMS}-item JSONL manifest and its all-done ledger`);
  const big = await buildBigLedger();
  const commands: Record<string, BigSample[]> = {};
  details.export = { ledgerBytes: big.ledgerBytes, buildMs: big.buildMs, commands };
  try {
    for (const command of EXPORT_COMMANDS) {
      const samples: BigSample[] = [];
      for (let i = 1; i <= LONG_RUNS; i += 1) {
        log(`export: mediabatch ${command} (${i}/${LONG_RUNS})`);
        samples.push(await bigCommand(big, command));
      }
      commands[command] = samples;
      rows.push(...exportRows(command, samples));
    }
  } finally {
    removeDir(big.dir);
  }
}

/** Seeds of the pace draws: each shape is played on each. */
const PACE_SEEDS = [7001, 7002, 7003];

/**
 * Every draw (3 shapes x 3 seeds) at once, each pair on its own two sandboxes: the clients mostly
 * sleep between looks at the service's real pace, so running them side by side costs no accuracy
 * and keeps the section to the longest draw, a few minutes.
 */
async function paceScenarios(): Promise<void> {
  const draws = PACE_SHAPES.flatMap((shape) => PACE_SEEDS.map((seed) => ({ shape, seed })));
  log(
    `pace: ${draws.length} draws (${PACE_SHAPES.map((shape) => shape.name).join(', ')}; seeds ${PACE_SEEDS.join(', ')}), mediabatch + naive client each, all at once`,
  );
  const samples = await Promise.all(draws.map(({ shape, seed }) => paceRun(shape, seed)));
  details.pace = samples;
  details.paceTable = paceTable(samples).split('\n');
  rows.push(...paceRows(samples));
}

async function wideScenario(): Promise<void> {
  const samples: PaceSample[] = [];
  for (let i = 0; i < LONG_RUNS; i += 1) {
    log(`wide: run ${i + 1}/${LONG_RUNS}, ${WIDE.items} items, limit ${WIDE.limit}, mediabatch alone`);
    samples.push(await paceRun(WIDE, 7001 + i, true));
  }
  details.wide = samples;
  rows.push(...wideRows(samples));
}

async function viewScenario(): Promise<void> {
  log(
    `view: ${LONG_RUNS} x (the live view fed ${VIEW_SLOTS} slots, ${VIEW_FINISHES_PER_SECOND} finishes/s; the run at that pace)`,
  );
  const samples: ViewSample[] = [];
  for (let i = 0; i < LONG_RUNS; i += 1) samples.push(await viewRun());
  details.view = samples;
  const scenario = '10 live view';
  const of = (pick: (sample: ViewSample) => number) => samples.map(pick);
  rows.push(
    series(
      scenario,
      'view CPU per second of run (listr2, 110x30)',
      'ms/s',
      1,
      of((x) => x.viewCpuMsPerSecond),
    ),
    series(
      scenario,
      'frames drawn per second',
      '/s',
      1,
      of((x) => x.framesPerSecond),
    ),
    series(
      scenario,
      'bytes to the terminal per second',
      'B/s',
      0,
      of((x) => x.bytesPerSecond),
    ),
    series(
      scenario,
      'run CPU per second at that pace (--json)',
      'ms/s',
      1,
      of((x) => x.runCpuMsPerSecond),
    ),
    {
      ...series(
        scenario,
        "view's share of the run's CPU",
        'ratio',
        3,
        of((x) => x.share),
      ),
      target: { op: '<', value: 0.05 },
    },
  );
}

async function s3Scenario(): Promise<void> {
  const result = await measureS3(log);
  details.s3 = result;
  rows.push(...s3Rows(result));
}

/** status, plan and export over 100,000 items on SQLite and on PostgreSQL, side by side. */
async function sharedReadsScenario(): Promise<void> {
  const samples = await sharedReadSamples(LONG_RUNS, log);
  details.sharedReads = samples;
  rows.push(...sharedReadRows(samples));
}

/** A first run and an unchanged re-run at each size (`growth-100k` adds 100,000 items, some minutes). */
async function growthScenario(): Promise<void> {
  const sizes = [...GROWTH_SIZES, ...(named('growth-100k') ? [100_000] : [])];
  const samples: GrowthSample[] = [];
  for (const items of sizes) {
    log(`growth: ${items} items, a first run then an unchanged re-run`);
    samples.push(await growthRun(items));
  }
  details.growth = samples;
  rows.push(...growthRows(samples));
  const paced: PacedGrowthSample[] = [];
  for (const items of PACED_SIZES) {
    log(`growth: a first run of ${items} items whose jobs take 0.6-1.8 s`);
    paced.push(await pacedGrowthRun(items, PACED_SEED));
  }
  details.growthPaced = paced;
  rows.push(...pacedGrowthRows(paced));
}

/**
 * Issue 52's figures: a first run of `fleet-items` (40,000) at 250 slots on the embedded sandbox and
 * of a quarter as many, each audited after; then one SQLite and one PostgreSQL runner on a
 * `fleet-shared-items` (10,000) batch, three rounds alternating, three rounds of four runners sharing it,
 * and three rounds of the same jobs as four batches of their own (the reference beside goal (b)).
 * `fleet-first` and `fleet-shared` run one half. `fleet-reference=<another build's dist/cli/main.js>`
 * plays the smaller first run with that build too, beside this tree's.
 */
async function fleetScenario(): Promise<void> {
  if (named('fleet') || named('fleet-first')) {
    const items = setting('fleet-items', FLEET_ITEMS);
    const samples: FirstRunSample[] = [];
    const reference = settings.get('fleet-reference') ?? null;
    // The reference build plays the smaller size beside this tree's, in the same run.
    if (reference !== null) samples.push(await firstRun(Math.floor(items / 4), log, reference));
    for (const size of [Math.floor(items / 4), items]) samples.push(await firstRun(size, log));
    details.fleetFirst = samples;
    rows.push(...firstRunRows(samples));
  }
  if (named('fleet') || named('fleet-shared')) {
    // A runner that fails here (issue 52's four runners once died of a PostgreSQL deadlock after
    // half an hour of bench) must not take the first run's figures down with it.
    try {
      const sample = await fleetSharedRuns(setting('fleet-shared-items', FLEET_SHARED_ITEMS), LONG_RUNS, log);
      details.fleetShared = sample;
      rows.push(...fleetSharedRows(sample));
    } catch (error) {
      details.fleetSharedError = error instanceof Error ? error.message : String(error);
      log(`fleet: the shared part failed, its figures are left out: ${details.fleetSharedError}`);
      process.exitCode = 1;
    }
  }
}

/** One runner on SQLite, one on PostgreSQL, four on one PostgreSQL ledger, one after another. */
async function sharedScenario(): Promise<void> {
  const samples = await sharedSamples(LONG_RUNS, log);
  details.shared = samples;
  rows.push(...sharedRows(samples));
}

async function main(): Promise<void> {
  const loadavgBefore = loadavg();
  log('building the CLI: tsc -p tsconfig.build.json');
  const buildMs = build();
  if (runs('writes')) await writeScenario();
  if (runs('slots')) await slotScenarios();
  if (runs('scale')) {
    await scaleScenario(undefined, '', true);
    if (existsSync(TMPFS)) await scaleScenario(TMPFS, ' on tmpfs (diagnostic)', false);
  }
  if (runs('large')) await largeScenario();
  if (named('large-1m')) await largeScenario(true);
  if (runs('export')) await exportScenario();
  if (runs('pace')) await paceScenarios();
  if (runs('wide')) await wideScenario();
  if (runs('view')) await viewScenario();
  if (runs('checks')) {
    details.checks = await checkRuns(log);
    rows.push(...checkRows(details.checks as CheckSample[]));
  }
  if (named('checks-cost')) {
    details.checksCost = await checkCostRuns(log);
    rows.push(...checkCostRows(details.checksCost as CheckCostSample[]));
  }
  if (named('s3')) await s3Scenario();
  if (named('shared')) await sharedScenario();
  await fleetScenario();
  if (named('growth') || named('growth-100k')) await growthScenario();
  if (named('shared-reads')) await sharedReadsScenario();
  if (named('manifest-read')) {
    const samples = await manifestReadRuns(log);
    details.manifestRead = samples;
    rows.push(...manifestReadRows(samples));
  }
  if (named('flat') || named('flat-rerun')) {
    const samples = named('flat') ? await flatRuns(log, settings.get('flat-reference') ?? null) : [];
    const rerun: FlatRerun | null = named('flat-rerun') ? await flatRerun(log) : null;
    details.flat = { samples, rerun };
    rows.push(...flatRows(samples, rerun));
  }
  if (named('refresh')) {
    const refresh = await refreshRuns(LONG_RUNS, log);
    details.refresh = refresh;
    rows.push(...refreshRows(refresh));
  }
  if (named('paths')) {
    const paths = await pathsRun(log);
    details.paths = paths;
    rows.push(...pathsRows(paths));
  }
  if (named('gallery') || (runs('gallery') && !chromiumMissing)) {
    details.gallery = await galleryRuns(LONG_RUNS, log);
    rows.push(...galleryRows(details.gallery as GallerySample[]));
  }
  // From this process's start (build included) to here; only npm's own start-up is left out.
  const totalMs = performance.now();
  // The ten minutes are the default run's: a scenario run only when named says how long it takes.
  const total = single('total', 'npm run bench wall time', 's', 1, totalMs / 1000);
  rows.push(wanted.size === 0 ? { ...total, target: { op: '<', value: 600 } } : total);

  const table = formatTable(rows);
  process.stdout.write(`\n${table}\n\n`);
  if (details.paceTable) process.stdout.write(`${(details.paceTable as string[]).join('\n')}\n\n`);
  const machine = {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus().length,
    tmpdir: tmpdir(),
    loadavgBefore,
    loadavgAfter: loadavg(),
  };
  const results = {
    generatedAt: new Date().toISOString(),
    machine,
    buildMs,
    totalMs,
    rows: rows.map((row) => ({ ...row, result: verdict(row) })),
    details,
    table: table.split('\n'),
  };
  // A run of some scenarios writes beside the full run's file, never over it.
  const name =
    wanted.size === 0
      ? 'results.json'
      : `results.${[...wanted, ...[...settings.values()].map((value) => value.replace(/\W+/g, '_'))].join('-')}.json`;
  writeFileSync(join(import.meta.dirname, name), `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote test/bench/${name}`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
