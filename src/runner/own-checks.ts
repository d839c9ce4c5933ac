import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sidecarPathFor } from '../downloads/sidecar.js';
import type { Manifest } from '../manifest/index.js';
import { programProblem, runCheckCommand } from './check-command.js';

/**
 * Checks of your own (docs/checks.md): each saved file of a take is given to each check the
 * manifest's `checks:` names (a program) or the library's `check` option (a function), after the
 * built-in checks. A program passes by exiting 0; anything else fails it, the first line it printed
 * being the reason; a JSON line `{"pass": ..., "score": ..., "reason": ...}` adds a score and its
 * own words. A check that cannot give a verdict at all (missing program, timeout, a function that
 * throws) is no failed take: it is thrown as CheckCannotRun, and the run stops (run-loop.ts).
 */

/** What a check function is given: one saved file of a take. */
export interface CheckedFile {
  itemId: string;
  take: number;
  /** The saved file: an absolute path, or an s3:// URI for an output in a bucket. */
  file: string;
  /** Its sidecar's path, or null where none is written (output.sidecars: false). */
  sidecar: string | null;
  /** The sidecar's JSON as parsed, or null where there is none to read. */
  provenance: unknown;
}

/** What a check function answers: true or false, or a verdict with a score and its words. */
export type CheckVerdict = boolean | { pass: boolean; score?: number | null; reason?: string | null };
export type CheckFunction = (file: CheckedFile) => CheckVerdict | Promise<CheckVerdict>;

export type OwnCheck =
  | { name: string; run: readonly string[]; timeoutMs: number }
  | { name: string; check: CheckFunction };

/** The checks of a batch and the folder their programs run in (the manifest's). */
export interface OwnChecks {
  checks: readonly OwnCheck[];
  cwd: string;
  /** The environment a check's program starts in: the batch's, without its secrets (settings.ts). */
  env: Record<string, string>;
}

/** One check's verdict on a take (all its files): failed if one failed; its lowest score. */
export interface OwnCheckResult {
  name: string;
  outcome: 'passed' | 'failed';
  score: number | null;
  reason: string | null;
}

export class CheckCannotRun extends Error {
  constructor(
    readonly check: string,
    readonly why: string,
  ) {
    super(`the check ${check} could not run: ${why}`);
  }
}

/** The manifest's `checks:` and a library caller's `check` function, in that order. */
export function ownChecksOf(
  manifest: Manifest,
  env: Record<string, string>,
  check?: CheckFunction,
): OwnChecks {
  return {
    checks: [
      ...(manifest.checks ?? []).map((spec) => ({
        name: spec.name,
        run: spec.run,
        timeoutMs: spec.timeoutMs,
      })),
      ...(check ? [{ name: check.name || 'check', check }] : []),
    ],
    cwd: dirname(manifest.file),
    env,
  };
}

/** The first check whose program cannot be started, looked for before anything is sent. */
export async function unrunnableCheck(own: OwnChecks): Promise<CheckCannotRun | null> {
  for (const check of own.checks) {
    if (!('run' in check)) continue;
    const problem = await programProblem(check.run[0]!, own.cwd, own.env);
    if (problem !== null) return new CheckCannotRun(check.name, problem);
  }
  return null;
}

/** Every check on every file of a take; throws CheckCannotRun. */
export async function runOwnChecks(
  own: OwnChecks,
  take: { itemId: string; take: number },
  files: ReadonlyArray<{ path: string }>,
): Promise<OwnCheckResult[]> {
  const results: OwnCheckResult[] = [];
  for (const check of own.checks) {
    let result: OwnCheckResult = { name: check.name, outcome: 'passed', score: null, reason: null };
    for (const file of files) {
      const checked = await checkedFileOf(take, file.path);
      const one = await runOne(own, check, checked);
      result = {
        ...(result.outcome === 'failed' ? result : one),
        score: lowest(result.score, one.score),
      };
    }
    results.push(result);
  }
  return results;
}

async function checkedFileOf(take: { itemId: string; take: number }, path: string): Promise<CheckedFile> {
  // A file in a bucket is named by its URI: its sidecar is there too, not on this disk.
  const local = !/^[a-z][a-z0-9+.-]*:\/\//i.test(path);
  const sidecar = local ? sidecarPathFor(path) : null;
  const text = sidecar === null ? null : await readFile(sidecar, 'utf8').catch(() => null);
  let provenance: unknown = null;
  try {
    provenance = text === null ? null : JSON.parse(text);
  } catch {
    // A sidecar edited into something else is handed on as text on stdin, and as null here.
  }
  return { ...take, file: path, sidecar: text === null ? null : sidecar, provenance };
}

async function runOne(own: OwnChecks, check: OwnCheck, file: CheckedFile): Promise<OwnCheckResult> {
  if ('check' in check) {
    let verdict: CheckVerdict;
    try {
      verdict = await check.check(file);
    } catch (error) {
      throw new CheckCannotRun(
        check.name,
        `it threw: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return resultOf(check.name, verdict);
  }
  const argv = check.run.map((word) =>
    word.replaceAll('{file}', file.file).replaceAll('{sidecar}', file.sidecar ?? ''),
  );
  const stdin = file.provenance === null ? '' : `${JSON.stringify(file.provenance)}\n`;
  const ran = await runCheckCommand(argv, { cwd: own.cwd, env: own.env, timeoutMs: check.timeoutMs, stdin });
  if (ran.kind === 'unusable') throw new CheckCannotRun(check.name, ran.reason);
  return commandResult(check.name, ran.code, ran.stdout, ran.stderr);
}

/**
 * A program's verdict: exit 0 passes, anything else fails; a JSON line with `pass` saying false
 * fails it too. The reason is the JSON line's, else the first line printed (stdout, then stderr).
 */
export function commandResult(name: string, code: number, stdout: string, stderr: string): OwnCheckResult {
  const lines = `${stdout}\n${stderr}`.split('\n').map((line) => line.trim());
  const json = lines.map(verdictLine).find((verdict) => verdict !== null) ?? null;
  const words = lines.find((line) => line !== '' && verdictLine(line) === null) ?? null;
  const passed = code === 0 && json?.pass !== false;
  const reason = json?.reason ?? words ?? (passed ? null : `it exited with ${code}`);
  return { name, outcome: passed ? 'passed' : 'failed', score: json?.score ?? null, reason };
}

function verdictLine(
  line: string,
): { pass: boolean | null; score: number | null; reason: string | null } | null {
  if (!line.startsWith('{')) return null;
  try {
    const value = JSON.parse(line) as Record<string, unknown>;
    if (value === null || typeof value !== 'object' || !('pass' in value || 'score' in value)) return null;
    return {
      pass: typeof value.pass === 'boolean' ? value.pass : null,
      score: typeof value.score === 'number' && Number.isFinite(value.score) ? value.score : null,
      reason: typeof value.reason === 'string' && value.reason.trim() !== '' ? value.reason.trim() : null,
    };
  } catch {
    return null;
  }
}

function resultOf(name: string, verdict: CheckVerdict): OwnCheckResult {
  if (typeof verdict === 'boolean')
    return {
      name,
      outcome: verdict ? 'passed' : 'failed',
      score: null,
      reason: verdict ? null : 'it failed',
    };
  const score = typeof verdict.score === 'number' && Number.isFinite(verdict.score) ? verdict.score : null;
  const reason = verdict.reason ?? (verdict.pass ? null : 'it failed');
  return { name, outcome: verdict.pass ? 'passed' : 'failed', score, reason };
}

function lowest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}
