import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { formatUsd } from '../../../src/money.js';
import type { SandboxConfigInput, SandboxHandle } from '../../../src/sandbox/index.js';
import type { CliResult } from '../../support/cli.js';
import { type E2eProject, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { seededRandom } from '../../support/seeded-random.js';
import { type CheckTarget, checkInvariants, FINAL_STATES } from './crash-checks.js';
import { type KillProxy, startKillProxy } from './kill-proxy.js';
import { snapshotCli, spawnWith } from './private-cli.js';

/**
 * How a run dies: after a random delay; the instant a new attempt row is committed; on a POST the
 * service never sees; on a POST the service stored and answered; in the middle of a slow download.
 */
export const KILL_MODES = ['timer', 'prepared', 'held', 'answered', 'download'] as const;
export type KillMode = (typeof KILL_MODES)[number];

export interface CrashLoopOptions {
  seed: number;
  /** Items per manifest group; a new group (with its own budget) is appended if all are final early. */
  items: number;
  kills: number;
  log?: (line: string) => void;
}

export interface CrashLoopFigures {
  seed: number;
  items: number;
  kills: number;
  killsByMode: Record<KillMode, number>;
  runs: number;
  cleanExits: number;
  checksPassed: number;
  jobs: number;
  posts: number;
  finalStates: Record<string, number>;
  elapsedMs: number;
}

const PRICES: Record<string, number> = { '480p': 20_000, '720p': 50_000 };
const FAST_BYTES = 1e9;
const SLOW_BYTES = 4_000;
/** Forced paths for some items: a busy model once, a 202 already failed once, a moderation refusal. */
const MARKERS = ['[[fail:model_busyx1]]', '[[reject:processing_failedx1]]', '[[fail:content_rejected]]'];

function faultyConfig(seed: number): Partial<SandboxConfigInput> {
  return {
    seed,
    workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 5 }],
    running_seconds: { min: 0.1, max: 0.6 },
    faults: {
      job_failures: {
        model_busy: 0.08,
        processing_failed: 0.08,
        provider_unavailable: 0.03,
        content_rejected: 0.03,
      },
      submit_failures: { processing_failed: 0.03, model_busy: 0.02 },
      http500_before_store: 0.05,
      http500_after_store: 0.1,
      drop_before_store: 0.05,
      drop_after_store: 0.1,
      download_cut: 0.15,
      latency_ms: { min: 0, max: 25 },
      download_bytes_per_second: FAST_BYTES,
    },
  };
}

/** One group of items: mixed costs, caps that mostly fit, markers forcing each failure path. */
function itemGroup(random: () => number, group: number, count: number): { lines: string[]; budget: number } {
  const lines: string[] = [];
  let feasible = 0;
  for (let i = 0; i < count; i++) {
    const seconds = 1 + Math.floor(random() * 3);
    const definition = random() < 0.7 ? '480p' : '720p';
    const cost = PRICES[definition]! * seconds;
    const tooLow = random() < 0.06;
    const cap = tooLow ? cost - 10_000 : cost + Math.floor(random() * 3) * 10_000;
    if (!tooLow) feasible += cost;
    const marker = MARKERS[i % 9] ?? '';
    const id = `g${group}-item-${String(i).padStart(3, '0')}`;
    lines.push(
      `  - {id: ${id}, prompt: "shot ${id} ${marker}", input: {seconds: ${seconds}, definition: ${definition}}, max_cost_usd: "${formatUsd(cap)}"}`,
    );
  }
  // Tight enough that reservations collide and some items end budget_exceeded.
  return { lines, budget: Math.floor((feasible * 0.8) / 10_000) * 10_000 };
}

class Manifest {
  readonly lines: string[] = [];
  budgetMicros = 0;
  groups = 0;
  constructor(
    readonly name: string,
    readonly p: E2eProject,
    readonly random: () => number,
  ) {}
  addGroup(count: number): void {
    const group = itemGroup(this.random, this.groups, count);
    this.groups += 1;
    this.lines.push(...group.lines);
    this.budgetMicros += group.budget;
    const head = manifestYaml(
      this.name,
      `concurrency: 4\nretries: 2\nbudget_usd: "${formatUsd(this.budgetMicros)}"\n`,
    );
    writeFileSync(this.p.manifest, `${head}items:\n${this.lines.join('\n')}\n`);
  }
}

function maxAttemptId(ledgerPath: string): number {
  if (!existsSync(ledgerPath)) return 0;
  const db = new Database(ledgerPath, { readonly: true });
  try {
    return (db.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM attempts').get() as { id: number }).id;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

function itemStates(ledgerPath: string): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!existsSync(ledgerPath)) return counts;
  const db = new Database(ledgerPath, { readonly: true });
  try {
    for (const row of db.prepare('SELECT state FROM items').all() as Array<{ state: string }>)
      counts[row.state] = (counts[row.state] ?? 0) + 1;
  } catch {
    // Killed before the schema was created: no items yet.
  } finally {
    db.close();
  }
  return counts;
}

interface Cycle {
  mode: KillMode | null;
  result: CliResult;
  killed: boolean;
}

/** Starts one run and, unless mode is null, kills it with SIGKILL at the moment the mode picks. */
async function runOnce(
  sandbox: SandboxHandle,
  proxy: KillProxy,
  m: Manifest,
  random: () => number,
  mode: KillMode | null,
  cli: string,
): Promise<Cycle> {
  sandbox.update({ faults: { download_bytes_per_second: mode === 'download' ? SLOW_BYTES : FAST_BYTES } });
  const baseline = maxAttemptId(m.p.ledger);
  const nth = 1 + Math.floor(random() * 3);
  const delay = 30 + random() * 1500;
  const settle = random() * 150;
  let killed = false;
  const { child, done } = spawnWith(cli, ['run', m.p.manifest, '--poll-interval', '0.05', '--json'], {
    cwd: m.p.dir,
    // model_busy jobs come back often here; the runner's real 30 s wait would only slow the loop.
    env: {
      MEDIAGEN_API_KEY: sandbox.apiKey,
      MEDIAGEN_BASE_URL: proxy.baseUrl,
      MEDIABATCH_MODEL_BUSY_SECONDS: '0.2',
    },
    timeoutMs: 120_000,
  });
  const kill = () => {
    if (killed || child.exitCode !== null) return;
    killed = true;
    child.kill('SIGKILL');
  };
  const timers: NodeJS.Timeout[] = [];
  if (mode === 'held' || mode === 'answered') proxy.arm({ point: mode, nth, fire: kill });
  else proxy.arm(null);
  if (mode === 'timer') timers.push(setTimeout(kill, delay));
  if (mode === 'prepared') {
    // Polls the ledger: the first of nth new attempt rows is committed and its POST not answered yet.
    const poll = setInterval(() => {
      if (maxAttemptId(m.p.ledger) >= baseline + nth) kill();
    }, 2);
    timers.push(poll);
  }
  if (mode === 'download') {
    const poll = setInterval(() => {
      const temps = existsSync(m.p.outDir) && readdirSync(m.p.outDir).some((name) => name.endsWith('.mbtmp'));
      if (temps) {
        clearInterval(poll);
        timers.push(setTimeout(kill, settle));
      }
    }, 3);
    timers.push(poll);
  }
  const result = await done;
  for (const timer of timers) clearTimeout(timer);
  proxy.arm(null);
  return { mode, result, killed: killed && result.signal === 'SIGKILL' };
}

/**
 * Kills the real CLI at least `kills` times at seeded moments, checking every promise after each
 * kill, then lets it finish and checks that the books balance to the micro-dollar.
 */
export async function crashLoop(options: CrashLoopOptions): Promise<CrashLoopFigures> {
  const started = Date.now();
  const random = seededRandom(options.seed);
  const log = options.log ?? (() => undefined);
  const name = `crash-${options.seed % 100_000}`;
  const snapshot = snapshotCli();
  const sandbox = await startTestSandbox(faultyConfig(options.seed));
  const proxy = await startKillProxy(sandbox.baseUrl);
  const p = project(name, '');
  const m = new Manifest(name, p, random);
  m.addGroup(options.items);
  const target = (): CheckTarget => ({ sandbox, p, name, budgetMicros: m.budgetMicros });
  const killsByMode = Object.fromEntries(KILL_MODES.map((mode) => [mode, 0])) as Record<KillMode, number>;
  let kills = 0;
  let runs = 0;
  let cleanExits = 0;
  let checksPassed = 0;
  const expectCleanExit = (cycle: Cycle) => {
    const { code, stderr } = cycle.result;
    if (code !== 0 && code !== 1) throw new Error(`run exited ${code} (${cycle.result.signal}): ${stderr}`);
    cleanExits += 1;
  };
  try {
    let order: KillMode[] = [];
    while (kills < options.kills) {
      if (order.length === 0) order = [...KILL_MODES].sort(() => random() - 0.5);
      const mode = order.pop()!;
      const cycle = await runOnce(sandbox, proxy, m, random, mode, snapshot.cli);
      runs += 1;
      if (cycle.killed) {
        kills += 1;
        killsByMode[mode] += 1;
      } else {
        expectCleanExit(cycle);
        const states = itemStates(p.ledger);
        const unsettled = Object.entries(states).some(([state, n]) => n > 0 && !FINAL_STATES.has(state));
        if (!unsettled) {
          log(`all ${m.lines.length} items final after ${kills} kills; adding ${options.items} more`);
          m.addGroup(options.items);
        }
      }
      checksPassed += checkInvariants(target(), false);
      if (runs % 10 === 0)
        log(`runs ${runs}, kills ${kills}, states ${JSON.stringify(itemStates(p.ledger))}`);
    }
    // Let it finish: a run may end with an item still in flight (say, downloads cut every time).
    for (let finishing = 0; ; finishing++) {
      const cycle = await runOnce(sandbox, proxy, m, random, null, snapshot.cli);
      runs += 1;
      expectCleanExit(cycle);
      const states = itemStates(p.ledger);
      const settled = Object.entries(states).every(([state, n]) => n === 0 || FINAL_STATES.has(state));
      if (settled) break;
      if (finishing >= 5) throw new Error(`items still unsettled after ${finishing + 1} finishing runs`);
    }
    checksPassed += checkInvariants(target(), true);
    const records = sandbox.records();
    return {
      seed: options.seed,
      items: m.lines.length,
      kills,
      killsByMode,
      runs,
      cleanExits,
      checksPassed,
      jobs: records.jobs.length,
      posts: records.requests.filter((request) => request.method === 'POST').length,
      finalStates: itemStates(p.ledger),
      elapsedMs: Date.now() - started,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `crash loop failed (seed ${options.seed}, reproduce with CRASH_SEED=${options.seed}) after ${runs} runs, ${kills} kills; project ${p.dir}:\n${message}`,
    );
  } finally {
    await proxy.close();
    await sandbox.close();
    snapshot.remove();
  }
}
