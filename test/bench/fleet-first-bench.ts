import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { series, single } from './bench-rows.js';
import { benchDir, benchSandboxConfig, removeDir } from './fixtures.js';
import { type CliRun, cpuMs, expectExit, rssMb, runCli } from './spawn-cli.js';
import type { Row } from './stats.js';

/**
 * `fleet`, part (a): issue 52's first run at dataset scale. `items` items (40,000 by default) at
 * 250 slots against the embedded sandbox (`run --sandbox`, the sandbox in the run's own process,
 * as the issue ran it) with jobs of 0.2-0.9 s. What is measured comes from outside the run, so the
 * run spends nothing on being watched:
 * - paid and unsaved at each moment: every job counts from its creation (the sandbox's state file,
 *   which the sandbox compacts to one line of every job when the run stops it) to its first file
 *   saved (the ledger's `files.saved_at`); the most at once, beside the run's bound;
 * - the save rate over the last 40% of saves against the first 40% (goal: at least 0.8), and the
 *   rate of each tenth of the saves, which shows where along the run a slowdown sets in;
 * - then `audit --sandbox` over the batch the run made: its time per job at two sizes shows
 *   whether it grows linearly (the issue: 8.9x the time for 4x the jobs).
 */
export const FLEET_ITEMS = 40_000;
const SLOTS = 250;
const BATCH = 'bench-fleet';
const SANDBOX = {
  queued_seconds: 0,
  running_seconds: { min: 0.2, max: 0.9 },
  retry_after_seconds: 1,
};

export interface CommandFigures {
  wallMs: number;
  cpuMs: number;
  systemCpuMs: number;
  peakRssMb: number;
}

export interface FirstRunSample {
  /** This tree's command, or a reference build of another (`fleet-reference=<cli/main.js>`). */
  code: 'this' | 'reference';
  items: number;
  slots: number;
  /** --max-unsaved's default: twice the concurrency. */
  unsavedBound: number;
  run: CommandFigures;
  /** First job created to last job created: when everything was paid for. */
  paidAllMs: number;
  /** First job created to the last file saved. */
  makespanMs: number;
  mostUnsaved: number;
  /** Saves per second over the first and the last 40% of saves, and their ratio (goal >= 0.8). */
  firstRate: number;
  lastRate: number;
  rateRatio: number;
  /** Saves per second over each tenth of the saves, in order. */
  decileRates: number[];
  audit: CommandFigures & { jobs: number };
}

const figures = (cli: CliRun): CommandFigures => ({
  wallMs: cli.wallMs,
  cpuMs: cpuMs(cli.stats),
  systemCpuMs: cli.stats.systemCpuMicros / 1000,
  peakRssMb: rssMb(cli.stats),
});

function files(items: number): Record<string, string> {
  const lines: string[] = [];
  for (let i = 1; i <= items; i += 1)
    lines.push(
      JSON.stringify({ id: `clip-${String(i).padStart(6, '0')}`, prompt: `Dataset clip ${i}: a kite` }),
    );
  return {
    'batch.yaml': `version: 1\nname: ${BATCH}\ninput: {seconds: 2, definition: 480p}\nconcurrency: ${SLOTS}\nitems_from: items.jsonl\n`,
    'items.jsonl': `${lines.join('\n')}\n`,
    'sandbox.json': JSON.stringify(benchSandboxConfig(SLOTS, SANDBOX)),
  };
}

/**
 * One first run of `items` items, then an audit of it, by this tree's command or by `reference`
 * (another build's dist/cli/main.js); the folder is removed after.
 */
export async function firstRun(
  items: number,
  log: (message: string) => void,
  reference: string | null = null,
): Promise<FirstRunSample> {
  const dir = benchDir('fleet-first', files(items));
  const code = reference === null ? 'this' : 'reference';
  try {
    const sandbox = ['--sandbox', '--sandbox-config', 'sandbox.json', '--json'];
    log(`fleet: a first run of ${items} items at ${SLOTS} slots, embedded sandbox (${code})`);
    const options = {
      cwd: dir,
      discardStdout: true,
      timeoutMs: 3_600_000,
      ...(reference ? { cli: reference } : {}),
    };
    const run = await runCli(['run', 'batch.yaml', ...sandbox], options);
    expectExit(run, 0, `fleet first run of ${items}`);
    const ledger = join(dir, '.mediabatch', 'sandbox', `${BATCH}.sqlite`);
    const created = createdTimes(`${ledger}.sandbox.jsonl`);
    const saved = savedTimes(ledger);
    if (created.length !== items || saved.length !== items)
      throw new Error(`${created.length} jobs and ${saved.length} saves for ${items} items`);
    log(`fleet: audit of the ${items} jobs`);
    const audit = await runCli(['audit', 'batch.yaml', ...sandbox], options);
    expectExit(audit, 0, `fleet audit of ${items}`);
    const rates = saveRates(saved);
    return {
      code,
      items,
      slots: SLOTS,
      unsavedBound: 2 * SLOTS,
      run: figures(run),
      paidAllMs: created.at(-1)! - created[0]!,
      makespanMs: saved.at(-1)! - created[0]!,
      mostUnsaved: mostAtOnce(created, saved),
      ...rates,
      audit: { ...figures(audit), jobs: created.length },
    };
  } finally {
    removeDir(dir);
  }
}

/** Each job's creation (epoch ms), sorted, from the compacted state file's one state line. */
function createdTimes(stateFile: string): number[] {
  const text = readFileSync(stateFile, 'utf8');
  const first = JSON.parse(text.slice(0, text.indexOf('\n'))) as {
    state: { jobs: Array<{ createdAt: number }> };
  };
  return first.state.jobs.map((job) => job.createdAt).sort((a, b) => a - b);
}

/** Each attempt's first file saved (epoch ms), sorted. */
function savedTimes(ledgerPath: string): number[] {
  const db = new Database(ledgerPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT MIN(saved_at) AS at FROM files GROUP BY attempt_id').all() as Array<{
      at: string;
    }>;
    return rows.map((row) => Date.parse(row.at)).sort((a, b) => a - b);
  } finally {
    db.close();
  }
}

/** The most jobs created and not yet saved at any moment; a save in the same millisecond counts first. */
export function mostAtOnce(created: readonly number[], saved: readonly number[]): number {
  let most = 0;
  let s = 0;
  for (let c = 0; c < created.length; c += 1) {
    while (s < saved.length && saved[s]! <= created[c]!) s += 1;
    most = Math.max(most, c + 1 - s);
  }
  return most;
}

/** Saves per second over a range of the sorted save times, [from, to) by index. */
const rateOver = (saved: readonly number[], from: number, to: number): number =>
  ((to - from - 1) / Math.max(1, saved[to - 1]! - saved[from]!)) * 1000;

export function saveRates(
  saved: readonly number[],
): Pick<FirstRunSample, 'firstRate' | 'lastRate' | 'rateRatio' | 'decileRates'> {
  const n = saved.length;
  const cut = Math.floor(n * 0.4);
  const firstRate = rateOver(saved, 0, cut);
  const lastRate = rateOver(saved, n - cut, n);
  const decileRates = Array.from({ length: 10 }, (_, i) =>
    rateOver(saved, Math.floor((n * i) / 10), Math.floor((n * (i + 1)) / 10)),
  );
  return { firstRate, lastRate, rateRatio: lastRate / firstRate, decileRates };
}

/** The rows of each size's first run and audit, then the audit's growth from the smaller to the larger. */
export function firstRunRows(samples: readonly FirstRunSample[]): Row[] {
  const rows = samples.flatMap((x) => {
    const scenario = `15 fleet ${x.items / 1000}k first run${x.code === 'this' ? '' : ' (reference)'}`;
    const one = (figure: string, unit: string, digits: number, value: number) =>
      single(scenario, figure, unit, digits, value);
    return [
      one('run: wall time, spawn -> exit', 's', 1, x.run.wallMs / 1000),
      one('run: CPU, user + system (the embedded sandbox included)', 's', 1, x.run.cpuMs / 1000),
      one('run: system CPU', 's', 1, x.run.systemCpuMs / 1000),
      one('run: CPU per item', 'ms', 2, x.run.cpuMs / x.items),
      one('run: peak RSS', 'MB', 1, x.run.peakRssMb),
      one('every job paid for: first job -> last job created', 's', 1, x.paidAllMs / 1000),
      one('first job -> last file saved', 's', 1, x.makespanMs / 1000),
      {
        ...one(`most paid and unsaved at once (--max-unsaved ${x.unsavedBound})`, 'jobs', 0, x.mostUnsaved),
        target: { op: '<=' as const, value: x.unsavedBound },
      },
      one('save rate, first 40% of saves', '/s', 1, x.firstRate),
      one('save rate, last 40% of saves', '/s', 1, x.lastRate),
      {
        ...one('goal: save rate, last 40% / first 40%', 'ratio', 3, x.rateRatio),
        target: { op: '>=' as const, value: 0.8 },
      },
      series(scenario, 'save rate of each tenth of the saves', '/s', 1, x.decileRates),
      one('audit: wall time, spawn -> exit', 's', 2, x.audit.wallMs / 1000),
      one('audit: CPU, user + system', 's', 2, x.audit.cpuMs / 1000),
      one('audit: CPU per job', 'ms', 3, x.audit.cpuMs / x.audit.jobs),
      one('audit: peak RSS', 'MB', 1, x.audit.peakRssMb),
    ];
  });
  const [small, large] = samples.filter((x) => x.code === 'this').sort((a, b) => a.items - b.items);
  if (small === undefined || large === undefined || small === large) return rows;
  const scenario = `15 fleet audit ${small.items / 1000}k -> ${large.items / 1000}k`;
  const perJob = (x: FirstRunSample, pick: (f: CommandFigures) => number) => pick(x.audit) / x.audit.jobs;
  return [
    ...rows,
    single(
      scenario,
      'audit wall time, larger / smaller',
      'ratio',
      2,
      large.audit.wallMs / small.audit.wallMs,
    ),
    single(scenario, 'jobs, larger / smaller', 'ratio', 2, large.audit.jobs / small.audit.jobs),
    {
      ...single(
        scenario,
        'goal: audit CPU per job, larger / smaller (linear: 1)',
        'ratio',
        3,
        perJob(large, (f) => f.cpuMs) / perJob(small, (f) => f.cpuMs),
      ),
      target: { op: '<=', value: 1.2 },
    },
    single(
      scenario,
      'audit wall time per job, larger / smaller',
      'ratio',
      3,
      perJob(large, (f) => f.wallMs) / perJob(small, (f) => f.wallMs),
    ),
  ];
}
