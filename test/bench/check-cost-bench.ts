import { startSandbox } from '../../src/sandbox/index.js';
import { series, single } from './bench-rows.js';
import { benchDir, benchSandboxConfig, cliEnv, removeDir } from './fixtures.js';
import { cpuMs, expectExit, runCli } from './spawn-cli.js';
import type { Row } from './stats.js';

/**
 * `checks-cost` (scenario 15): what checking every saved take costs a whole run (docs/checks.md,
 * issue 51's "a 10,000-item run loses under 5% throughput"). The same 10,000 instant jobs at 500
 * slots as scenario 3's, run with the built-in check on (the default) and off (`video_checks:
 * false`, the reference), one after the other, alternating so a change in the machine's load
 * falls on both; the best run of each is compared, since on a shared machine the slowest runs
 * measure the neighbours.
 */
export const COST_ITEMS = 10_000;
const COST_LIMIT = 500;
const PAIRS = 3;

export interface CheckCostSample {
  checks: 'on' | 'off';
  itemsPerSecond: number;
  /** The CLI's own CPU (user + system) per item: what the check adds, whatever the neighbours do. */
  cpuMsPerItem: number;
  wallMs: number;
}

function costFiles(checks: 'on' | 'off'): Record<string, string> {
  const lines: string[] = [];
  for (let i = 1; i <= COST_ITEMS; i += 1) {
    const id = `clip-${String(i).padStart(6, '0')}`;
    lines.push(JSON.stringify({ id, prompt: `Product shot ${i}: a ceramic mug turning on a white table` }));
  }
  const off = checks === 'off' ? 'video_checks: false\n' : '';
  return {
    'batch.yaml': `version: 1\nname: bench-checks\ninput: {seconds: 2, definition: 480p, orientation: "16:9"}\nconcurrency: ${COST_LIMIT}\n${off}items_from: items.jsonl\n`,
    'items.jsonl': `${lines.join('\n')}\n`,
  };
}

async function costRun(checks: 'on' | 'off', dirs: string[]): Promise<CheckCostSample> {
  const sandbox = await startSandbox(
    benchSandboxConfig(COST_LIMIT, {
      queued_seconds: 0,
      running_seconds: { min: 0, max: 0 },
      retry_after_seconds: 1,
    }),
    { port: 0 },
  );
  const dir = benchDir(`checks-${checks}`, costFiles(checks));
  dirs.push(dir);
  try {
    const run = await runCli(
      ['run', 'batch.yaml', '--base-url', sandbox.baseUrl, '--poll-interval', '1', '--json'],
      { cwd: dir, env: cliEnv(sandbox), timeoutMs: 600_000 },
    );
    expectExit(run, 0, `checks ${checks} run`);
    const report = JSON.parse(run.stdout) as { totals: { done: number } };
    if (report.totals.done !== COST_ITEMS) throw new Error(`only ${report.totals.done} items done`);
    return {
      checks,
      itemsPerSecond: COST_ITEMS / (run.wallMs / 1000),
      cpuMsPerItem: cpuMs(run.stats) / COST_ITEMS,
      wallMs: run.wallMs,
    };
  } finally {
    await sandbox.close();
  }
}

/** PAIRS x (on, off), alternating; folders removed together at the end (see scale-bench.ts, scaleSamples). */
export async function checkCostRuns(log: (line: string) => void): Promise<CheckCostSample[]> {
  const samples: CheckCostSample[] = [];
  const dirs: string[] = [];
  try {
    for (let i = 1; i <= PAIRS; i += 1)
      for (const checks of i % 2 === 1 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        log(`checks-cost: pair ${i}/${PAIRS}, checks ${checks}, ${COST_ITEMS} instant jobs, limit 500`);
        samples.push(await costRun(checks, dirs));
      }
  } finally {
    for (const dir of dirs) removeDir(dir);
  }
  return samples;
}

export function checkCostRows(samples: readonly CheckCostSample[]): Row[] {
  const of = (checks: 'on' | 'off') =>
    samples.filter((s) => s.checks === checks).map((s) => s.itemsPerSecond);
  const best = (checks: 'on' | 'off') => Math.max(...of(checks));
  const cpu = (checks: 'on' | 'off') => samples.filter((s) => s.checks === checks).map((s) => s.cpuMsPerItem);
  const leastCpu = (checks: 'on' | 'off') => Math.min(...cpu(checks));
  const scenario = '15 checks cost 10k';
  return [
    series(scenario, 'items per second, checks on', '/s', 0, of('on')),
    series(scenario, 'items per second, video_checks: false (reference)', '/s', 0, of('off')),
    single(scenario, 'best on / best off', 'ratio', 3, best('on') / best('off')),
    {
      ...single(
        scenario,
        'throughput lost with checks on (best of each)',
        'share',
        3,
        1 - best('on') / best('off'),
      ),
      target: { op: '<', value: 0.05 },
    },
    series(scenario, 'CPU per item, checks on', 'ms', 3, cpu('on')),
    series(scenario, 'CPU per item, video_checks: false (reference)', 'ms', 3, cpu('off')),
    single(
      scenario,
      'CPU per item added by checks (least of each)',
      'share',
      3,
      leastCpu('on') / leastCpu('off') - 1,
    ),
  ];
}
