import type { BigSample } from './big-ledger-bench.js';
import type { GrowthSample, PacedGrowthSample } from './growth-bench.js';
import type { PaceSample } from './pace-bench.js';
import type { Destination, TransferSample } from './s3-bench.js';
import type { RateSample } from './s3-reference.js';
import type { S3Result } from './s3-scenario.js';
import type { ScaleSample } from './scale-bench.js';
import { SHARED, SHARED_RUNNERS, type SharedRun, type SharedSample } from './shared-bench.js';
import type { SharedReadSample } from './shared-reads-bench.js';
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

/** Scenario 4 at 100,000 items (2 s each), and 4m at 1,000,000 (12 s each); 300 MB at both. */
export function largeRows(command: string, samples: readonly BigSample[], million = false): Row[] {
  return rowsOf(million ? '4m 1M ledger' : '4 100k ledger', samples, [
    [`${command}: wall time`, 's', 2, (x) => x.wallMs / 1000, below(million ? 12 : 2)],
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

/** Scenario 6: every draw beside the naive client and the zero-lag limit, judged over all draws. */
export function paceRows(samples: readonly PaceSample[]): Row[] {
  const scenario = '6 pace';
  const naive = (sample: PaceSample) => {
    if (sample.naive === null) throw new Error(`${scenario}: no naive client run`);
    return sample.naive;
  };
  const worst = (value: (sample: PaceSample) => number) => Math.max(...samples.map(value));
  return [
    ...rowsOf(scenario, samples, [
      ['mediabatch makespan / zero-lag limit', 'ratio', 3, (x) => x.cli.ratio, atMost(1.08)],
      ['naive client makespan / zero-lag limit', 'ratio', 3, (x) => naive(x).ratio],
    ]),
    {
      ...single(
        scenario,
        'worst draw: mediabatch / zero-lag limit',
        'ratio',
        3,
        worst((x) => x.cli.ratio),
      ),
      target: atMost(1.12),
    },
    {
      ...single(
        scenario,
        'worst draw: makespan mediabatch / naive',
        'ratio',
        3,
        worst((x) => x.cli.makespanMs / naive(x).makespanMs),
      ),
      target: atMost(1),
    },
    {
      ...single(
        scenario,
        'worst draw: requests mediabatch / naive',
        'ratio',
        3,
        worst((x) => x.cli.requests / naive(x).requests),
      ),
      target: atMost(1),
    },
    {
      ...single(
        scenario,
        'worst draw: busiest window, mediabatch - naive',
        'req',
        0,
        worst((x) => x.cli.maxInWindow - naive(x).maxInWindow),
      ),
      target: atMost(0),
    },
  ];
}

/** The pace draws side by side, one line each, as README and docs/performance.md show them. */
export function paceTable(samples: readonly PaceSample[]): string {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const lines = [
    '| shape | seed | zero-lag limit | mediabatch | / limit | requests | busiest window | naive client | / limit | requests | busiest window |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const x of samples) {
    const naive = x.naive;
    const their = naive
      ? `${s(naive.makespanMs)} s | ${naive.ratio.toFixed(3)} | ${naive.requests} | ${naive.maxInWindow}`
      : '| | |';
    lines.push(
      `| ${x.shape} | ${x.seed} | ${s(x.zeroLagMs)} s | ${s(x.cli.makespanMs)} s | ${x.cli.ratio.toFixed(3)} | ${x.cli.requests} | ${x.cli.maxInWindow} | ${their} |`,
    );
  }
  return lines.join('\n');
}

/** Scenario 8: many slots, short jobs, a fixed 1 s poll interval. */
export function wideRows(samples: readonly PaceSample[]): Row[] {
  const s = 1000;
  return rowsOf('8 200 slots', samples, [
    ['zero-lag limit', 's', 2, (x) => x.zeroLagMs / s],
    ['mediabatch makespan: first POST -> last file saved', 's', 2, (x) => x.cli.makespanMs / s],
    ['makespan / zero-lag limit', 'ratio', 3, (x) => x.cli.ratio],
    [
      'slot utilisation = sum(durations) / 200 / makespan',
      'ratio',
      3,
      (x) => x.cli.utilisation,
      atLeast(0.85),
    ],
    ['API requests per item', 'req', 2, (x) => x.cli.requests / x.items, atMost(1.2)],
  ]);
}

/**
 * Scenario 11: the same batch to the disk and to S3, each followed by the raw rate of its medium,
 * then the store's memory ceiling beside the measured peaks, and the machine's load.
 */
export function s3Rows(result: S3Result): Row[] {
  return [
    ...transferRows('disk', result),
    ...transferRows('s3', result),
    ...memoryRows(result),
    single(S3_SCENARIO, 'load average (1 min) before the scenario', 'load', 2, result.loadBefore[0]!),
    single(S3_SCENARIO, 'load average (1 min) after the scenario', 'load', 2, result.loadAfter[0]!),
  ];
}

const S3_SCENARIO = '11 s3';

function transferRows(target: Destination, result: S3Result): Row[] {
  const label = target === 'disk' ? 'disk' : 'S3';
  const samples = result.runs.filter((x) => x.target === target);
  const server: Array<Spec<TransferSample>> =
    target === 's3' ? [['S3: CPU of the server (Swift)', 's', 1, (x) => x.serverCpuS ?? Number.NaN]] : [];
  const rows = rowsOf(S3_SCENARIO, samples, [
    [`${label}: wall time, spawn -> exit`, 's', 1, (x) => x.wallMs / 1000],
    [`${label}: items per second`, 'items/s', 2, (x) => x.itemsPerSecond],
    [`${label}: throughput`, 'MiB/s', 1, (x) => x.mibPerSecond],
    [`${label}: peak RSS of the CLI`, 'MB', 1, (x) => x.peakRssMb],
    [`${label}: CPU of the CLI, user + system`, 's', 1, (x) => x.cpuS],
    [`${label}: CPU of the sandbox serving the files`, 's', 1, (x) => x.sandboxCpuS],
    ...server,
    [`${label}: machine CPU busy, every process`, 'cores', 2, (x) => x.machine.busyCores],
  ]);
  const byKind = new Map<string, RateSample[]>();
  for (const sample of result.references[target]) {
    const kind = `${label} reference: ${sample.what}, ${sample.concurrency} at a time`;
    byKind.set(kind, [...(byKind.get(kind) ?? []), sample]);
  }
  for (const [kind, references] of byKind) {
    rows.push(
      series(
        S3_SCENARIO,
        kind,
        'MiB/s',
        1,
        references.map((x) => x.mibPerSecond),
      ),
    );
    if (references.some((x) => x.serverCpuS !== undefined)) {
      const cpu = references.map((x) => x.serverCpuS ?? Number.NaN);
      rows.push(series(S3_SCENARIO, '  CPU of the server (Swift)', 's', 1, cpu));
    }
  }
  return rows;
}

function memoryRows({ ceiling, runs, sdkMb }: S3Result): Row[] {
  const { downloadConcurrency: saves, partsInFlight, partBytes, ceilingMib, thisBatchMib } = ceiling;
  const peak = (target: Destination) =>
    summarize(runs.filter((x) => x.target === target).map((x) => x.peakRssMb)).median;
  const parts = `${partsInFlight} parts x ${partBytes / 1024 / 1024} MiB`;
  const batch = `${saves} x ${thisBatchMib / saves} MiB`;
  return [
    single(S3_SCENARIO, `upload buffer ceiling: ${saves} saves x ${parts}`, 'MB', 1, ceilingMib),
    single(S3_SCENARIO, `  for this batch's files (one part each): ${batch}`, 'MB', 1, thisBatchMib),
    single(S3_SCENARIO, 'peak RSS, S3 - disk (medians)', 'MB', 1, peak('s3') - peak('disk')),
    single(S3_SCENARIO, '  the S3 SDK loaded in a bare node process', 'MB', 1, sdkMb),
  ];
}

/**
 * Scenario 13: one runner on SQLite, one on PostgreSQL (the reference) and four on one PostgreSQL
 * ledger, on the same jobs, beside the limits of any 1 s list poller; then the two goals.
 */
export function sharedRows(samples: readonly SharedSample[]): Row[] {
  const scenario = '13 shared';
  const four = `${SHARED_RUNNERS} runners sharing concurrency 200 (the issue's ${SHARED_RUNNERS} x 50)`;
  return [
    ...rowsOf(scenario, samples, [
      ['zero-lag limit', 's', 2, (x) => x.zeroLagMs / 1000],
      ['utilisation at the zero-lag limit (no client does better)', 'ratio', 3, (x) => x.zeroLagUtilisation],
      [
        'requests per item of a poller listing once a second, at fewest (sim.)',
        'req',
        3,
        (x) => x.listPollerRequestsPerItem,
      ],
    ]),
    ...sharedRunRows(
      scenario,
      'SQLite, 1 runner x 200',
      samples.map((x) => x.sqlite),
    ),
    ...sharedRunRows(
      scenario,
      'PostgreSQL, 1 runner x 200',
      samples.map((x) => x.single),
    ),
    ...sharedRunRows(
      scenario,
      `PostgreSQL, ${four}`,
      samples.map((x) => x.four),
    ),
    ...rowsOf(scenario, samples, [
      [
        `goal: utilisation, ${SHARED_RUNNERS} runners / 1 runner (PostgreSQL)`,
        'ratio',
        3,
        (x) => x.four.client.utilisation / x.single.client.utilisation,
        atLeast(0.95),
      ],
      [
        `goal: requests per item, ${SHARED_RUNNERS} runners / 1 runner (PostgreSQL)`,
        'ratio',
        3,
        (x) => x.four.client.requests / x.single.client.requests,
        atMost(1.1),
      ],
      [
        'utilisation, 1 runner PostgreSQL / SQLite',
        'ratio',
        3,
        (x) => x.single.client.utilisation / x.sqlite.client.utilisation,
      ],
    ]),
  ];
}

/** One way of running the batch: the sandbox's figures, then each runner's (one row over all runners). */
function sharedRunRows(scenario: string, label: string, runs: readonly SharedRun[]): Row[] {
  const runners = runs.flatMap((x) => x.runners);
  const each = runs[0]!.runners.length > 1 ? 'each runner' : 'the runner';
  const postgres = runs[0]!.ledger === 'postgres';
  const perRunner = (
    figure: string,
    unit: string,
    digits: number,
    pick: (r: SharedRun['runners'][number]) => number,
  ) => series(scenario, `  ${each}: ${figure}`, unit, digits, runners.map(pick));
  return [
    ...rowsOf(scenario, runs, [
      [`${label}: makespan, first POST -> last file saved`, 's', 2, (x) => x.client.makespanMs / 1000],
      ['  slot utilisation = sum(durations) / 200 / makespan', 'ratio', 3, (x) => x.client.utilisation],
      ['  API requests per item', 'req', 3, (x) => x.client.requests / SHARED.items],
      ['  CPU per item, every runner, user + system', 'ms', 2, (x) => x.cpuMsPerItem],
      ...(postgres
        ? ([
            [
              '  database round trips per item, every runner',
              'trips',
              2,
              (x) => x.roundTripsPerItem ?? Number.NaN,
            ],
            ['  CPU of the PostgreSQL server', 's', 2, (x) => x.serverCpuS],
          ] as Array<Spec<SharedRun>>)
        : []),
      ['  CPU of the sandbox (bench process)', 's', 2, (x) => x.sandboxCpuS],
      [
        '  runners stopped at their start by another start, started again',
        'runners',
        0,
        (x) => x.restarts,
        atMost(0),
      ],
      [
        '  runners still running 15 s after the last file saved (then SIGINT)',
        'runners',
        0,
        (x) => x.runners.filter((r) => r.interrupted).length,
        atMost(0),
      ],
      ['  machine CPU busy, every process', 'cores', 2, (x) => x.machine.busyCores],
    ]),
    perRunner('peak RSS', 'MB', 1, (r) => r.peakRssMb),
    perRunner('CPU, user + system', 's', 2, (r) => r.cpuMs / 1000),
    perRunner('wall time, spawn -> exit', 's', 2, (r) => r.wallMs / 1000),
    perRunner('exit after the last file saved', 's', 2, (r) => r.endedAfterLastSaveMs / 1000),
    ...(postgres ? [perRunner('database round trips', 'trips', 0, (r) => r.roundTrips ?? Number.NaN)] : []),
  ];
}

/** Scenario 14: each read command's time on SQLite and on PostgreSQL, and their ratio (goal: at most 2). */
export function sharedReadRows(samples: readonly SharedReadSample[]): Row[] {
  return samples.flatMap(({ command, sqlite, postgres }) => {
    const ratios = postgres.map((sample, index) => sample.wallMs / sqlite[index]!.wallMs);
    return [
      series(
        '14 100k reads',
        `${command}: wall time on SQLite`,
        's',
        2,
        sqlite.map((x) => x.wallMs / 1000),
      ),
      series(
        '14 100k reads',
        `${command}: wall time on PostgreSQL`,
        's',
        2,
        postgres.map((x) => x.wallMs / 1000),
      ),
      {
        ...series('14 100k reads', `${command}: PostgreSQL / SQLite`, 'ratio', 2, ratios),
        target: { op: '<=' as const, value: 2 },
      },
      series(
        '14 100k reads',
        `${command}: peak RSS on PostgreSQL`,
        'MB',
        1,
        postgres.map((x) => x.peakRssMb),
      ),
    ];
  });
}

/** Scenario 14: each size's first run and unchanged re-run, and the re-run's growth between sizes. */
export function growthRows(samples: readonly GrowthSample[]): Row[] {
  const rows: Row[] = [];
  for (const items of [...new Set(samples.map((sample) => sample.items))]) {
    const of = samples.filter((sample) => sample.items === items);
    const label = items.toLocaleString('en-US');
    rows.push(
      ...rowsOf(`14 growth ${label}`, of, [
        ['first run: CPU per item, user + system', 'ms', 3, (x) => x.firstCpuMs / items],
        ['first run: peak RSS', 'MB', 1, (x) => x.firstRssMb],
        [
          'unchanged re-run: wall time',
          's',
          2,
          (x) => x.againWallMs / 1000,
          items <= 10_000 ? below(5) : below(10),
        ],
        ['unchanged re-run: CPU per item', 'ms', 3, (x) => x.againCpuMs / items],
        ['unchanged re-run: peak RSS', 'MB', 1, (x) => x.againRssMb, below(300)],
      ]),
    );
  }
  return rows;
}

/** The paced first runs of scenario 14: utilisation at each size, and the larger's against the smaller's. */
export function pacedGrowthRows(samples: readonly PacedGrowthSample[]): Row[] {
  const [small, large] = [Math.min(...samples.map((x) => x.items)), Math.max(...samples.map((x) => x.items))];
  const rows: Row[] = [];
  for (const items of [small, large]) {
    const label = items.toLocaleString('en-US');
    rows.push(
      ...rowsOf(
        `14 growth ${label}`,
        samples.filter((sample) => sample.items === items),
        [
          ['first run, jobs 0.6-1.8 s at 250 slots: makespan', 's', 2, (x) => x.makespanMs / 1000],
          ['  zero-lag limit of the same jobs', 's', 2, (x) => x.zeroLagMs / 1000],
          ['  slot utilisation = sum(durations) / 250 / makespan', 'ratio', 3, (x) => x.utilisation],
        ],
      ),
    );
  }
  const pairs = samples
    .filter((x) => x.items === small)
    .map((x, n) => [x, samples.filter((y) => y.items === large)[n]!]);
  rows.push(
    ...rowsOf(`14 growth`, pairs, [
      [
        `goal: utilisation of a first run, ${large.toLocaleString('en-US')} items / ${small.toLocaleString('en-US')}`,
        'ratio',
        3,
        ([a, b]) => b!.utilisation / a!.utilisation,
        atLeast(0.9),
      ],
    ]),
  );
  return rows;
}
