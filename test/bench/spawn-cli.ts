import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const CLI = join(ROOT, 'dist/cli/main.js');
const WRAPPER = join(import.meta.dirname, 'child-stats.mjs');

export interface ChildStats {
  exitCode: number;
  userCpuMicros: number;
  systemCpuMicros: number;
  maxRssKib: number;
  /** Statements sent to a PostgreSQL ledger (child-stats.mjs); null on a SQLite ledger. */
  ledgerRoundTrips: number | null;
}

export interface CliRun {
  code: number | null;
  /** Parent's view: spawn to 'close' (process start-up and exit included). */
  wallMs: number;
  stats: ChildStats;
  /** stdout, unless `discardStdout` (then only its byte count is kept). */
  stdout: string;
  /** The last `keepEnds` bytes of stdout, when asked; else ''. */
  stdoutTail: string;
  stdoutBytes: number;
  stderr: string;
  startedAt: number;
  endedAt: number;
  /** Whether `interrupt` sent the child SIGINT before it ended on its own. */
  interrupted: boolean;
}

export interface CliRunOptions {
  cwd: string;
  env?: Record<string, string>;
  discardStdout?: boolean;
  /**
   * Keep only this many bytes of stdout at each end (a million items' JSON is more than a string
   * holds): `stdout` is the head, `stdoutTail` the tail.
   */
  keepEnds?: number;
  /** Each line of stdout as it comes (with `discardStdout`, what a million records' output is read by). */
  onLine?: (line: string) => void;
  timeoutMs?: number;
  /** Extra node flags for the child, e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** Once this settles, a child still running gets SIGINT (a run drains and ends, as on Ctrl-C). */
  interrupt?: Promise<unknown>;
  /** Another build of the command to run, a reference beside this one (default: this tree's). */
  cli?: string;
}

/**
 * Runs the built CLI through child-stats.mjs (see there for why) and returns its wall time, its
 * own CPU time and peak RSS, and its output.
 */
export async function runCli(args: string[], options: CliRunOptions): Promise<CliRun> {
  const statsDir = mkdtempSync(join(tmpdir(), 'mb-bench-stats-'));
  const statsFile = join(statsDir, 'stats.json');
  const startedAt = Date.now();
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), WRAPPER, options.cli ?? CLI, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env, MEDIABATCH_BENCH_STATS: statsFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let stdoutBytes = 0;
  let stderr = '';
  const tailChunks: Buffer[] = [];
  let tailBytes = 0;
  let partLine = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdoutBytes += chunk.length;
    if (options.onLine) {
      const lines = (partLine + chunk.toString('utf8')).split('\n');
      partLine = lines.pop()!;
      for (const line of lines) options.onLine(line);
    }
    const ends = options.keepEnds;
    if (ends !== undefined) {
      if (stdoutBytes - chunk.length < ends) out.push(chunk);
      // The last chunks, enough to cover `ends` bytes: joined once, at the end (joining at every
      // chunk copied a megabyte per 64 KB read, and a slow reader slows the command it measures).
      tailChunks.push(chunk);
      tailBytes += chunk.length;
      while (tailBytes - tailChunks[0]!.length >= ends) tailBytes -= tailChunks.shift()!.length;
    } else if (!options.discardStdout) out.push(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
  let ended = false;
  let interrupted = false;
  void options.interrupt?.then(() => {
    if (ended) return;
    interrupted = true;
    child.kill('SIGINT');
  });
  const code = await new Promise<number | null>((done) => child.on('close', (exit) => done(exit)));
  if (partLine !== '') options.onLine?.(partLine);
  ended = true;
  clearTimeout(timer);
  const wallMs = performance.now() - started;
  let stats: ChildStats;
  try {
    stats = JSON.parse(readFileSync(statsFile, 'utf8')) as ChildStats;
  } catch {
    throw new Error(
      `mediabatch ${args[0]} left no resource figures (exit ${code}): ${stderr.slice(0, 2000)}`,
    );
  } finally {
    rmSync(statsDir, { recursive: true, force: true });
  }
  return {
    code,
    wallMs,
    stats,
    stdout: Buffer.concat(out).toString('utf8'),
    stdoutTail: tailOf(tailChunks, options.keepEnds ?? 0).toString('utf8'),
    stdoutBytes,
    stderr,
    startedAt,
    endedAt: Date.now(),
    interrupted,
  };
}

/** The last `ends` bytes of these chunks. */
function tailOf(chunks: Buffer[], ends: number): Buffer {
  const joined = Buffer.concat(chunks);
  return joined.subarray(Math.max(0, joined.length - ends));
}

export const cpuMs = (stats: ChildStats): number => (stats.userCpuMicros + stats.systemCpuMicros) / 1000;
export const rssMb = (stats: ChildStats): number => stats.maxRssKib / 1024;

/** Fails loudly: a benchmark of a run that did not do its work measures nothing. */
export function expectExit(run: CliRun, expected: number, what: string): void {
  if (run.code !== expected) {
    throw new Error(`${what}: exit ${run.code}, expected ${expected}\n${run.stderr.slice(0, 4000)}`);
  }
}
