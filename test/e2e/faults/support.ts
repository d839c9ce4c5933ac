import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { type ManifestResult, outputPathFor } from '../../../src/manifest/index.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import type { CliResult } from '../../support/cli.js';
import {
  type E2eProject,
  ledgerMoney,
  ledgerRows,
  type StatusJson,
  sandboxMoney,
} from '../../support/e2e.js';

/** A line of a Node stack trace. */
export const STACK_LINE = /^\s{2,}at /m;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `predicate` every 20 ms (no long sleeps); throws with `what` when it never holds, or at
 * once with the run's output when the CLI run it waits on (`running`) ends first.
 */
export async function until(
  predicate: () => boolean,
  what: string,
  timeoutMs = 20_000,
  running?: Promise<CliResult>,
): Promise<void> {
  let ended: CliResult | undefined;
  let broke: unknown;
  void running?.then(
    (result) => {
      ended = result;
    },
    (error: unknown) => {
      broke = error;
    },
  );
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (broke) throw broke;
    if (ended)
      throw new Error(`the run ended (exit ${ended.code}) before ${what}:\n${ended.stdout}\n${ended.stderr}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export function expectNoStackTrace(result: CliResult): void {
  expect(result.stderr).not.toMatch(STACK_LINE);
  expect(result.stdout).not.toMatch(STACK_LINE);
  expect(result.stderr).not.toContain('internal error');
}

/** Every file under `dir` (recursively), with its path. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(full);
    }
  };
  walk(dir);
  return out;
}

export function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * The closing checks of every fault scenario: the run's JSON report says each item is done with
 * one attempt, the sandbox created exactly one job per item (never paid twice), each saved file
 * is byte-identical to that job's output, no temporary file is left, and the ledger's money equals
 * the sandbox's.
 */
export function expectAllDoneOnce(
  sandbox: SandboxHandle,
  p: E2eProject,
  name: string,
  result: CliResult,
  ids: readonly string[],
): StatusJson {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  const report = JSON.parse(result.stdout) as StatusJson;
  expect(report.items.map((item) => item.id).sort()).toEqual([...ids].sort());
  const jobs = sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name);
  for (const item of report.items) {
    expect(item.state, `${item.id}: ${JSON.stringify(item.error)}`).toBe('done');
    expect(item.attempts).toBe(1);
    const own = jobs.filter((job) => job.metadata['mediabatch.item'] === item.id);
    expect(own, `jobs of ${item.id}`).toHaveLength(1);
    const job = own[0]!;
    expect(job.status).toBe('succeeded');
    expect(item.job_id).toBe(job.id);
    expect(item.files).toEqual([`out/${name}/${item.id}.mp4`]);
    const path = join(p.dir, item.files[0]!);
    expect(statSync(path).size).toBe(job.files[0]!.bytes);
    expect(sha256(path)).toBe(job.files[0]!.sha256);
  }
  expect(filesUnder(p.outDir).filter((file) => file.endsWith('.mbtmp'))).toEqual([]);
  expect(ledgerMoney(p)).toEqual(sandboxMoney(sandbox, name));
  const net = ledgerRows<{ net: number }>(
    p,
    'SELECT SUM(amount_micros - refunded_micros) AS net FROM attempts',
  )[0]!.net;
  expect(report.totals.spent_usd).toBe((net / 1e6).toFixed(6));
  return report;
}

/** `items:` lines for ids with the given prompt suffix. */
export function itemsYaml(
  ids: readonly string[],
  prompt: (id: string) => string = (id) => `shot ${id}`,
): string {
  return `items:\n${ids.map((id) => `  - {id: ${id}, prompt: "${prompt(id)}"}\n`).join('')}`;
}

export const FILE = '/m/batch.yaml';
export const noSibling = (rel: string) => ({ file: `/m/${rel}`, error: 'file not found' });
export const siblingText = (text: string) => (rel: string) => ({ file: `/m/${rel}`, text });

/** The problems of a manifest that must be refused; fails the test when it was accepted. */
export function problemsOf(result: ManifestResult): Extract<ManifestResult, { ok: false }>['problems'] {
  if (result.ok)
    throw new Error(`expected the manifest to be refused; it has ${result.manifest.items.length} items`);
  return result.problems;
}

/** The manifest that must be accepted; fails the test with its problems when it was refused. */
export function manifestOf(result: ManifestResult): Extract<ManifestResult, { ok: true }>['manifest'] {
  if (!result.ok) throw new Error(`expected a manifest, got problems: ${JSON.stringify(result.problems)}`);
  return result.manifest;
}

/** Never a throw; a manifest, or problems that each point at a positive line and column. */
export function wellFormed(run: () => ManifestResult): ManifestResult {
  let result: ManifestResult | undefined;
  expect(() => {
    result = run();
  }).not.toThrow();
  if (result!.ok) {
    for (const item of result!.manifest.items) {
      const target = outputPathFor(result!.manifest.outputDir, item.id, 0, 1, 'mp4');
      // Inside the output folder, also when that folder is the root (output.dir ../.. from /m).
      const inside = relative(result!.manifest.outputDir, target);
      expect(inside !== '' && !inside.startsWith('..') && !isAbsolute(inside), target).toBe(true);
    }
    return result!;
  }
  expect(result!.problems.length).toBeGreaterThan(0);
  for (const problem of result!.problems) {
    expect(Number.isInteger(problem.line) && problem.line >= 1, JSON.stringify(problem)).toBe(true);
    expect(Number.isInteger(problem.column) && problem.column >= 1, JSON.stringify(problem)).toBe(true);
    expect(problem.message).not.toContain('internal error');
  }
  return result!;
}

/** Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN): a real full or read-only disk. */
export function canMount(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = join(process.env.TMPDIR ?? '/tmp', `mediabatch-mount-probe-${process.pid}`);
  try {
    mkdirSync(probe, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/**
 * `it` for a test that needs a real tmpfs. Where mounting is not allowed it is skipped with a
 * notice on the console, except under CI=true, where it runs (and fails at its first mount): CI
 * must prove these promises, not skip them.
 */
export function itWithMount(): typeof it.skip {
  if (canMount() || process.env.CI === 'true') return it.skipIf(false);
  console.warn('NOTICE: tests on a real tmpfs are skipped: this process may not mount one (run as root)');
  return it.skip;
}

/** The error code of writing `data` to `path`, or 'written' when it fits. */
export function writeErrorCode(path: string, data: Buffer): string {
  try {
    writeFileSync(path, data);
    return 'written';
  } catch (error) {
    return String((error as NodeJS.ErrnoException).code);
  }
}
