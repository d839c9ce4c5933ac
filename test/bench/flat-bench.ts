import { loadavg } from 'node:os';
import { single } from './bench-rows.js';
import { type BigCommand, bigCommand, buildBigLedger } from './big-ledger-bench.js';
import { benchDir, removeDir } from './fixtures.js';
import { growthRun } from './growth-bench.js';
import { cpuMs, expectExit, rssMb, runCli } from './spawn-cli.js';
import type { Row } from './stats.js';

/**
 * `flat` (issue 53, "Flat to a million"): each reading command at 100,000 and at 1,000,000 items,
 * side by side in one run, each once, in a child process of its own: wall time, CPU time, peak RSS
 * and the load average of the machine just before. `plan` on a fresh ledger (a JSON Lines
 * manifest, no ledger yet); `status`, `export` and `plan` on the all-done ledger of scenario 4
 * (`large-1m`: one saved file per item that the fixture never writes, so every file is missing).
 * The goals: peak RSS at most 400 MB, time per item at a million at most 1.3x that at 100,000, and
 * each under 4 s at 100,000. `flat-rerun` adds the unchanged re-run of a done 100,000-item batch
 * (a first run of instant jobs on the sandbox, then the same run again: under 15 s and 400 MB).
 */
export const FLAT_SIZES = [100_000, 1_000_000] as const;

/** The commands timed at each size, and what they read. */
export const FRESH_COMMANDS = ['plan', 'plan --json'] as const;
export const DONE_COMMANDS: readonly BigCommand[] = [
  'status',
  'status --json',
  'export',
  'export --format csv',
  'plan',
  'plan --json',
];

export interface FlatSample {
  ledger: 'fresh' | 'done';
  /** This tree's command, or a reference build of another (`flat-reference=<cli/main.js>`). */
  code: 'this' | 'reference';
  command: string;
  items: number;
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
  stdoutBytes: number;
  /** The machine's one-minute load average just before the command started (2 CPUs, shared). */
  load: number;
}

export interface FlatRerun {
  items: number;
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
  load: number;
}

/** A JSON Lines manifest of `items` items (as scenario 4's) and no ledger: nothing has run. */
function freshBatch(items: number): string {
  const lines: string[] = [];
  for (let i = 1; i <= items; i += 1) {
    const id = `shot-${String(i).padStart(7, '0')}`;
    lines.push(JSON.stringify({ id, prompt: `Catalogue clip ${i}: a paper lantern drifting at dusk` }));
  }
  return benchDir('flat-fresh', {
    'batch.yaml':
      'version: 1\nname: bench-fresh\ninput: {seconds: 2, definition: 480p}\nitems_from: items.jsonl\n',
    'items.jsonl': `${lines.join('\n')}\n`,
  });
}

async function freshPlan(dir: string, items: number, command: string, cli?: string): Promise<FlatSample> {
  const load = loadavg()[0]!;
  const flags = command.split(' ').slice(1);
  const run = await runCli(['plan', 'batch.yaml', ...flags], {
    cwd: dir,
    discardStdout: !flags.includes('--json'),
    timeoutMs: 1_800_000,
    ...(cli === undefined ? {} : { cli }),
  });
  expectExit(run, 0, `mediabatch ${command} (fresh, ${items})`);
  if (flags.includes('--json')) {
    const doc = JSON.parse(run.stdout) as { totals: { new: number } };
    if (doc.totals.new !== items) throw new Error(`${command}: ${doc.totals.new} new of ${items}`);
  }
  const code = cli === undefined ? 'this' : 'reference';
  return { ledger: 'fresh', code, command, items, ...figures(run), load };
}

const figures = (run: Awaited<ReturnType<typeof runCli>>) => ({
  wallMs: run.wallMs,
  cpuMs: cpuMs(run.stats),
  peakRssMb: rssMb(run.stats),
  stdoutBytes: run.stdoutBytes,
});

/**
 * Each command at each size, by this tree's build and then, when given, by `reference` (another
 * build's dist/cli/main.js: today's commands beside the streamed ones, in the same run).
 */
export async function flatRuns(
  log: (line: string) => void,
  reference: string | null = null,
): Promise<FlatSample[]> {
  const samples: FlatSample[] = [];
  const builds = reference === null ? [undefined] : [undefined, reference];
  for (const items of FLAT_SIZES) {
    log(`flat: a fresh ${items}-item manifest`);
    const dir = freshBatch(items);
    try {
      for (const command of FRESH_COMMANDS)
        for (const cli of builds) {
          log(`flat: mediabatch ${command} on a fresh ledger, ${items} items${cli ? ' (reference)' : ''}`);
          samples.push(await freshPlan(dir, items, command, cli));
          log(`flat: ${JSON.stringify(samples.at(-1))}`);
        }
    } finally {
      removeDir(dir);
    }
    log(`flat: building the all-done ${items}-item ledger`);
    const big = await buildBigLedger(items);
    try {
      for (const command of DONE_COMMANDS)
        for (const cli of builds) {
          log(`flat: mediabatch ${command} on the done ledger, ${items} items${cli ? ' (reference)' : ''}`);
          const load = loadavg()[0]!;
          const sample = await bigCommand(big, command, cli);
          const code = cli === undefined ? 'this' : 'reference';
          samples.push({ ledger: 'done', code, command, items, ...sample, load });
          log(`flat: ${JSON.stringify(samples.at(-1))}`);
        }
    } finally {
      removeDir(big.dir);
    }
  }
  return samples;
}

export async function flatRerun(log: (line: string) => void): Promise<FlatRerun> {
  log('flat: a first run of 100,000 instant jobs, then the unchanged re-run');
  const load = loadavg()[0]!;
  const sample = await growthRun(100_000);
  return {
    items: sample.items,
    wallMs: sample.againWallMs,
    cpuMs: sample.againCpuMs,
    peakRssMb: sample.againRssMb,
    load,
  };
}

const below = (value: number) => ({ op: '<' as const, value });
const atMost = (value: number) => ({ op: '<=' as const, value });

export function flatRows(samples: readonly FlatSample[], rerun: FlatRerun | null): Row[] {
  const rows: Row[] = [];
  const keys = [...new Set(samples.map((sample) => `${sample.ledger}\0${sample.command}\0${sample.code}`))];
  for (const key of keys) {
    const [ledger, command, code] = key.split('\0') as [string, string, string];
    const of = samples.filter(
      (sample) => sample.ledger === ledger && sample.command === command && sample.code === code,
    );
    const scenario = `53 flat ${ledger}${code === 'this' ? '' : ' (reference)'}`;
    for (const sample of of) {
      const size = `${sample.items / 1000}k`;
      const wall = single(scenario, `${command} ${size}: wall time`, 's', 2, sample.wallMs / 1000);
      rows.push(
        sample.items === 100_000 ? { ...wall, target: below(4) } : wall,
        single(scenario, `${command} ${size}: CPU, user + system`, 's', 2, sample.cpuMs / 1000),
        {
          ...single(scenario, `${command} ${size}: peak RSS`, 'MB', 1, sample.peakRssMb),
          target: atMost(400),
        },
        single(scenario, `${command} ${size}: load average before`, '', 2, sample.load),
      );
    }
    const [small, large] = [of.find((x) => x.items === 100_000), of.find((x) => x.items === 1_000_000)];
    if (small && large) {
      const perItem = (x: FlatSample) => x.wallMs / x.items;
      rows.push({
        ...single(
          scenario,
          `${command}: wall per item, 1M / 100k`,
          'ratio',
          2,
          perItem(large) / perItem(small),
        ),
        target: atMost(1.3),
      });
      rows.push(
        single(scenario, `${command}: CPU per item, 1M / 100k`, 'ratio', 2, large.cpuMs / 10 / small.cpuMs),
      );
    }
  }
  if (rerun !== null)
    rows.push(
      {
        ...single('53 flat re-run', 'unchanged re-run of 100k: wall time', 's', 2, rerun.wallMs / 1000),
        target: below(15),
      },
      single('53 flat re-run', 'unchanged re-run of 100k: CPU, user + system', 's', 2, rerun.cpuMs / 1000),
      {
        ...single('53 flat re-run', 'unchanged re-run of 100k: peak RSS', 'MB', 1, rerun.peakRssMb),
        target: atMost(400),
      },
      single('53 flat re-run', 'load average before the first run', '', 2, rerun.load),
    );
  return rows;
}
