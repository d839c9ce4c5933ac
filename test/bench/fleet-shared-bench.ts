import { startPostgresServer } from '../support/postgres-server.js';
import { series, single } from './bench-rows.js';
import type { PaceShape } from './pace-shapes.js';
import { type SeparateRun, separateBatches } from './separate-batches.js';
import { SHARED, SHARED_RUNNERS, type SharedRun, sharedRun } from './shared-bench.js';
import { type Row, summarize } from './stats.js';

/**
 * `fleet`, parts (b) and (c): scenario 13's jobs (limit 200, 0.6-1.8 s, pinned by the prompts'
 * markers) at dataset scale, `items` of them (10,000 by default), one draw for every run, each
 * run against its own fresh sandbox and database:
 * - (c) one runner on SQLite and one on PostgreSQL, `rounds` times, alternating which goes first,
 *   so that a machine getting busier or quieter weighs on both alike; the best makespan of each
 *   (first POST to last file saved) side by side (goal: PostgreSQL within 1.05x);
 * - (b) four runners started together on one PostgreSQL ledger, `rounds` times: CPU per item of
 *   every runner together against the single PostgreSQL runner's on the same batch, medians
 *   (goal: at most 1.3x). How the work splits between the four changes from one round to the
 *   next, and the figure with it (1.25x to 1.9x, docs/performance.md): one round is one draw;
 * - beside (b), `rounds` times, the same jobs as four batches of their own (separate-batches.ts),
 *   a quarter of the items and of the slots each: their four runners started together, then the
 *   first quarter's runner alone. What four processes each working a quarter cost with nothing
 *   shared, the reference that tells what sharing the batch adds to (b).
 */
export const FLEET_SHARED_ITEMS = 10_000;
const SEED = 7301;

export const fleetShape = (items: number): PaceShape => ({ ...SHARED, name: `fleet ${items}`, items });

export interface FleetSharedSample {
  items: number;
  zeroLagMs: number;
  /** In the order they ran: `first` says which of the pair went first in its round. */
  rounds: Array<{ first: 'sqlite' | 'postgres'; sqlite: SharedRun; postgres: SharedRun }>;
  /** The four runners' rounds, in the order they ran. */
  fours: SharedRun[];
  /** The same jobs as four batches of their own, their runners started together, round by round. */
  parts: SeparateRun[];
  /** The first of those batches run alone, round by round. */
  alone: SeparateRun[];
}

export async function fleetSharedRuns(
  items: number,
  rounds: number,
  log: (message: string) => void,
): Promise<FleetSharedSample> {
  const shape = fleetShape(items);
  const server = await startPostgresServer();
  try {
    const played: FleetSharedSample['rounds'] = [];
    let zeroLagMs = Number.NaN;
    const one = async (ledger: 'sqlite' | 'postgres', round: number) => {
      log(`fleet: round ${round}/${rounds}, one runner on ${ledger}, ${items} items, limit ${shape.limit}`);
      const { run, bounds } = await sharedRun(SEED, 1, ledger === 'sqlite' ? null : server, shape);
      zeroLagMs = bounds.zeroLagMs;
      return run;
    };
    for (let round = 1; round <= rounds; round += 1) {
      const first = round % 2 === 1 ? 'sqlite' : 'postgres';
      const runs = await inOrder(first, (ledger) => one(ledger, round));
      played.push({ first, ...runs });
    }
    const fours: SharedRun[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      log(
        `fleet: round ${round}/${rounds}, ${SHARED_RUNNERS} runners on one PostgreSQL ledger, ${items} items`,
      );
      fours.push((await sharedRun(SEED, SHARED_RUNNERS, server, shape)).run);
    }
    const parts: SeparateRun[] = [];
    const alone: SeparateRun[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      log(
        `fleet: round ${round}/${rounds}, the same jobs as ${SHARED_RUNNERS} batches of their own, together`,
      );
      parts.push(await separateBatches(SEED, SHARED_RUNNERS, server, shape, true));
      log(`fleet: round ${round}/${rounds}, the first of those batches alone`);
      alone.push(await separateBatches(SEED, SHARED_RUNNERS, server, shape, false));
    }
    return { items, zeroLagMs, rounds: played, fours, parts, alone };
  } finally {
    await server.stop();
  }
}

async function inOrder(
  first: 'sqlite' | 'postgres',
  run: (ledger: 'sqlite' | 'postgres') => Promise<SharedRun>,
): Promise<{ sqlite: SharedRun; postgres: SharedRun }> {
  const a = await run(first);
  const b = await run(first === 'sqlite' ? 'postgres' : 'sqlite');
  return first === 'sqlite' ? { sqlite: a, postgres: b } : { sqlite: b, postgres: a };
}

export function fleetSharedRows(sample: FleetSharedSample): Row[] {
  const scenario = `16 fleet ${sample.items / 1000}k shared`;
  const s = (run: SharedRun) => run.client.makespanMs / 1000;
  const sqlite = sample.rounds.map((round) => round.sqlite);
  const postgres = sample.rounds.map((round) => round.postgres);
  const bestSqlite = Math.min(...sqlite.map(s));
  const bestPostgres = Math.min(...postgres.map(s));
  const singleCpu = summarize(postgres.map((run) => run.cpuMsPerItem)).median;
  const each = (label: string, runs: SharedRun[]): Row[] => [
    series(scenario, `${label}: makespan, first POST -> last file saved`, 's', 2, runs.map(s)),
    series(
      scenario,
      `${label}: slot utilisation`,
      'ratio',
      3,
      runs.map((run) => run.client.utilisation),
    ),
    series(
      scenario,
      `${label}: CPU per item, user + system`,
      'ms',
      2,
      runs.map((run) => run.cpuMsPerItem),
    ),
    series(
      scenario,
      `${label}: peak RSS`,
      'MB',
      1,
      runs.map((run) => run.runners[0]!.peakRssMb),
    ),
    series(
      scenario,
      `${label}: machine CPU busy`,
      'cores',
      2,
      runs.map((run) => run.machine.busyCores),
    ),
  ];
  const fours = sample.fours;
  const four = (label: string, unit: string, digits: number, value: (run: SharedRun) => number) =>
    series(scenario, `${SHARED_RUNNERS} runners: ${label}`, unit, digits, fours.map(value));
  const fourCpu = summarize(fours.map((run) => run.cpuMsPerItem)).median;
  return [
    single(scenario, 'zero-lag limit', 's', 2, sample.zeroLagMs / 1000),
    ...each('SQLite, 1 runner', sqlite),
    ...each('PostgreSQL, 1 runner', postgres),
    series(
      scenario,
      'PostgreSQL, 1 runner: CPU of the server',
      's',
      2,
      postgres.map((run) => run.serverCpuS),
    ),
    {
      ...single(
        scenario,
        'goal (c): best makespan, PostgreSQL / SQLite',
        'ratio',
        3,
        bestPostgres / bestSqlite,
      ),
      target: { op: '<=', value: 1.05 },
    },
    four('makespan', 's', 2, s),
    four('slot utilisation', 'ratio', 3, (run) => run.client.utilisation),
    four('CPU per item, every runner', 'ms', 2, (run) => run.cpuMsPerItem),
    four('CPU of the server', 's', 2, (run) => run.serverCpuS),
    // How the work split: the busiest runner's share of the four's CPU, round by round.
    four('the busiest runner’s share of their CPU', 'ratio', 3, busiestShare),
    four('restarted at their start', 'runners', 0, (run) => run.restarts),
    four('machine CPU busy', 'cores', 2, (run) => run.machine.busyCores),
    {
      ...single(
        scenario,
        `goal (b): CPU per item, ${SHARED_RUNNERS} runners / 1 runner (PostgreSQL, medians)`,
        'ratio',
        3,
        fourCpu / singleCpu,
      ),
      target: { op: '<=', value: 1.3 },
    },
    ...separateRows(scenario, sample, singleCpu, fourCpu),
  ];
}

/** The reference beside (b): four batches of their own, together and the first alone. */
function separateRows(
  scenario: string,
  sample: FleetSharedSample,
  singleCpu: number,
  fourCpu: number,
): Row[] {
  const own = `${SHARED_RUNNERS} batches of their own, a quarter each`;
  const partsCpu = summarize(sample.parts.map((run) => run.cpuMsPerItem)).median;
  return [
    series(
      scenario,
      `${own}, together: CPU per item`,
      'ms',
      2,
      sample.parts.map((run) => run.cpuMsPerItem),
    ),
    series(
      scenario,
      `${own}: the first alone, CPU per item`,
      'ms',
      2,
      sample.alone.map((run) => run.cpuMsPerItem),
    ),
    single(scenario, `${own}, together / 1 runner on the whole (medians)`, 'ratio', 3, partsCpu / singleCpu),
    single(scenario, `${SHARED_RUNNERS} runners sharing / ${own} (medians)`, 'ratio', 3, fourCpu / partsCpu),
  ];
}

function busiestShare(run: SharedRun): number {
  const each = run.runners.map((runner) => runner.cpuMs);
  return Math.max(...each) / each.reduce((sum, cpu) => sum + cpu, 0);
}
