import type { BigSample } from './big-ledger-bench.js';
import type { PaceSample } from './pace-bench.js';
import type { ScaleSample } from './scale-bench.js';
import type { SlotSample } from './slot-bench.js';
import { type Comparison, type Row, summarize } from './stats.js';
import type { WriteSample } from './write-rate-bench.js';

/** What each scenario puts in the table: one row per figure, from its samples. */

type Target = { op: Comparison; value: number };
type Spec<T> = [figure: string, unit: string, digits: number, value: (sample: T) => number, target?: Target];

const atLeast = (value: number): Target => ({ op: '>=', value });
const atMost = (value: number): Target => ({ op: '<=', value });
const below = (value: number): Target => ({ op: '<', value });

function rowsOf<T>(scenario: string, samples: readonly T[], specs: Array<Spec<T>>): Row[] {
  return specs.map(([figure, unit, digits, value, target]) => ({
    scenario,
    figure,
    unit,
    digits,
    summary: summarize(samples.map(value)),
    ...(target ? { target } : {}),
  }));
}

/** A plain series of samples with no target. */
export function series(
  scenario: string,
  figure: string,
  unit: string,
  digits: number,
  samples: number[],
): Row {
  return { scenario, figure, unit, digits, summary: summarize(samples) };
}

/** A figure known once (a simulation, a size), shown as a one-run row. */
export function single(scenario: string, figure: string, unit: string, digits: number, value: number): Row {
  return { scenario, figure, unit, digits, summary: summarize([value]) };
}

export function slotRows(samples: readonly SlotSample[], listPollerBound: number): Row[] {
  const s = 1000;
  return [
    ...rowsOf('1 slots', samples, [
      ['ideal makespan = sum(completedAt - createdAt) / 3', 's', 2, (x) => x.idealMs / s],
      ['makespan: first POST -> last file saved (ledger)', 's', 2, (x) => x.makespanMs / s],
      ['CLI wall time, spawn -> exit (for reference)', 's', 2, (x) => x.wallMs / s],
      ['slot utilisation = ideal / makespan', 'ratio', 3, (x) => x.utilisation, atLeast(0.9)],
    ]),
    single('1 slots', 'utilisation bound of any 1 s list poller (sim.)', 'ratio', 3, listPollerBound),
    ...rowsOf('1 slots', samples, [
      ['naive client slot utilisation', 'ratio', 3, (x) => x.naive.utilisation],
    ]),
    ...rowsOf('2 requests', samples, [
      ['mediabatch API requests per job', 'req', 2, (x) => x.requestsPerJob],
      ['naive client API requests per job', 'req', 2, (x) => x.naive.requestsPerJob],
      [
        'requests ratio mediabatch / naive',
        'ratio',
        3,
        (x) => x.requestsPerJob / x.naive.requestsPerJob,
        atMost(0.5),
      ],
      ['mediabatch makespan', 's', 2, (x) => x.makespanMs / s],
      ['naive client makespan (first POST -> last file)', 's', 2, (x) => x.naive.makespanMs / s],
      [
        'makespan ratio mediabatch / naive',
        'ratio',
        3,
        (x) => x.makespanMs / x.naive.makespanMs,
        atMost(1.05),
      ],
    ]),
  ];
}

export function scaleRows(label: string, samples: readonly ScaleSample[], withTargets: boolean): Row[] {
  const target = (value: Target) => (withTargets ? value : undefined);
  return rowsOf(`3 scale${label}`, samples, [
    ['items per second = 5,000 / CLI wall time', 'items/s', 1, (x) => x.itemsPerSecond, target(atLeast(300))],
    ['CPU per item, user + system', 'ms', 3, (x) => x.cpuMsPerItem, target(below(2))],
    ['  of which user', 'ms', 3, (x) => x.userCpuMsPerItem],
    ['  of which system', 'ms', 3, (x) => x.systemCpuMsPerItem],
    ['peak RSS of the CLI', 'MB', 1, (x) => x.peakRssMb],
  ]);
}

export function largeRows(command: string, samples: readonly BigSample[]): Row[] {
  return rowsOf('4 100k ledger', samples, [
    [`${command}: wall time`, 's', 2, (x) => x.wallMs / 1000, below(2)],
    [`${command}: CPU time, user + system`, 's', 2, (x) => x.cpuMs / 1000],
    [`${command}: peak RSS`, 'MB', 1, (x) => x.peakRssMb, below(300)],
  ]);
}

export function exportRows(command: string, samples: readonly BigSample[]): Row[] {
  return rowsOf('9 100k export', samples, [
    [`${command}: wall time`, 's', 2, (x) => x.wallMs / 1000, below(2)],
    [`${command}: CPU time, user + system`, 's', 2, (x) => x.cpuMs / 1000],
    [`${command}: peak RSS`, 'MB', 1, (x) => x.peakRssMb, below(200)],
    [`${command}: output`, 'MB', 1, (x) => x.stdoutBytes / 1024 / 1024],
  ]);
}

export function writeRows(samples: readonly WriteSample[]): Row[] {
  const first = samples[0]!;
  const mode = `synchronous=${first.synchronous === 2 ? 'FULL' : first.synchronous}, ${first.journalMode}`;
  return rowsOf('5 ledger writes', samples, [
    [`committed attempts per second (${mode})`, 'att/s', 1, (x) => x.cyclesPerSecond],
    ['time per commit (2 commits per attempt)', 'ms', 2, (x) => x.msPerCommit],
  ]);
}

/** Scenarios 6 and 7: each figure beside the naive client's and beside the physical limit. */
export function paceRows(scenario: string, samples: readonly PaceSample[]): Row[] {
  const s = 1000;
  const naive = (sample: PaceSample) => {
    if (sample.naive === null) throw new Error(`${scenario}: no naive client run`);
    return sample.naive;
  };
  const window = `${(samples[0]!.windowMs / s).toFixed(0)} s`;
  const worstExcess = Math.max(...samples.map((x) => x.cli.maxInWindow - naive(x).maxInWindow));
  return [
    ...rowsOf(scenario, samples, [
      ['limit: ideal makespan = sum(job durations) / limit', 's', 2, (x) => x.cli.idealMs / s],
      ['mediabatch makespan: first POST -> last file saved', 's', 2, (x) => x.cli.makespanMs / s],
      ['naive client makespan', 's', 2, (x) => naive(x).makespanMs / s],
      [
        'makespan ratio mediabatch / naive',
        'ratio',
        3,
        (x) => x.cli.makespanMs / naive(x).makespanMs,
        atMost(0.92),
      ],
      ['mediabatch slot utilisation = ideal / makespan', 'ratio', 3, (x) => x.cli.utilisation, atLeast(0.9)],
      ['naive client slot utilisation', 'ratio', 3, (x) => naive(x).utilisation],
      ['limit: minimum requests (account + POST and list per job)', 'req', 0, (x) => x.minRequests],
      ['mediabatch API requests', 'req', 1, (x) => x.cli.requests],
      ['naive client API requests', 'req', 1, (x) => naive(x).requests],
      [
        'requests ratio mediabatch / naive',
        'ratio',
        3,
        (x) => x.cli.requests / naive(x).requests,
        atMost(0.6),
      ],
      [`mediabatch most requests in any ${window} window`, 'req', 0, (x) => x.cli.maxInWindow],
      [`naive client most requests in any ${window} window`, 'req', 0, (x) => naive(x).maxInWindow],
    ]),
    {
      ...single(scenario, `worst run: mediabatch - naive, most in a ${window} window`, 'req', 0, worstExcess),
      target: atMost(0),
    },
  ];
}

/** Scenario 8: many slots, short jobs, a fixed 1 s poll interval. */
export function wideRows(samples: readonly PaceSample[]): Row[] {
  const s = 1000;
  return rowsOf('8 200 slots', samples, [
    ['limit: ideal makespan = sum(job durations) / 200', 's', 2, (x) => x.cli.idealMs / s],
    ['mediabatch makespan: first POST -> last file saved', 's', 2, (x) => x.cli.makespanMs / s],
    ['slot utilisation = ideal / makespan', 'ratio', 3, (x) => x.cli.utilisation, atLeast(0.7)],
    ['API requests per job', 'req', 2, (x) => x.cli.requests / x.items],
  ]);
}
