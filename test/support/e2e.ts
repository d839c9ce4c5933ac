import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { readHead } from '../../src/batch/output/output-files.js';
import { isGalleryPage } from '../../src/documents/gallery/page.js';
import { OWNER_MARKER } from '../../src/downloads/output-owner.js';
import { type SandboxConfigInput, type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { type CliResult, runCli, spawnCli, tempProject } from './cli.js';

/** Sandbox settings that make a whole batch finish in about a second. */
export function fastConfig(overrides: Partial<SandboxConfigInput> = {}): SandboxConfigInput {
  return {
    seed: 7,
    keys: [{ key: 'mg_test_key_000000000000', id: 1, workspace: 'ws_test' }],
    workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 3 }],
    queued_seconds: 0.05,
    running_seconds: { min: 0.1, max: 0.3 },
    retry_after_seconds: 0.1,
    ...overrides,
  };
}

export async function startTestSandbox(overrides: Partial<SandboxConfigInput> = {}): Promise<SandboxHandle> {
  return startSandbox(fastConfig(overrides), { port: 0 });
}

/** A manifest head with the usual fields; append `items:` yourself. */
export function manifestYaml(name: string, extra = ''): string {
  return `version: 1\nname: ${name}\ninput: {seconds: 2, definition: 480p}\n${extra}`;
}

export interface E2eProject {
  dir: string;
  manifest: string;
  ledger: string;
  outDir: string;
}

export function project(name: string, yaml: string, files: Record<string, string> = {}): E2eProject {
  const dir = tempProject({ 'batch.yaml': yaml, ...files });
  return {
    dir,
    manifest: join(dir, 'batch.yaml'),
    ledger: join(dir, '.mediabatch', `${name}.sqlite`),
    outDir: join(dir, 'out', name),
  };
}

/** The same project as `run --sandbox` sees it: its own ledger and output folder (docs/services.md). */
export function asSandboxRun(p: E2eProject, name: string): E2eProject {
  return {
    ...p,
    ledger: join(p.dir, '.mediabatch', 'sandbox', `${name}.sqlite`),
    outDir: join(p.dir, 'out', 'sandbox', name),
  };
}

export function cliEnv(sandbox: SandboxHandle, key = sandbox.apiKey): Record<string, string> {
  return { MEDIAGEN_API_KEY: key, MEDIAGEN_BASE_URL: sandbox.baseUrl };
}

/** `mediabatch run` against the sandbox with a fast poll interval. */
export function runAgainst(
  sandbox: SandboxHandle,
  p: E2eProject,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<CliResult> {
  return runCli(['run', p.manifest, '--poll-interval', '0.1', ...extraArgs], {
    cwd: p.dir,
    env: { ...cliEnv(sandbox), ...env },
  });
}

export function spawnRun(sandbox: SandboxHandle, p: E2eProject, extraArgs: string[] = []) {
  return spawnCli(['run', p.manifest, '--poll-interval', '0.1', ...extraArgs], {
    cwd: p.dir,
    env: cliEnv(sandbox),
  });
}

/** Reads the ledger with plain SQL, independent of the Ledger class under test. */
export function ledgerRows<T>(p: E2eProject, sql: string, ...params: unknown[]): T[] {
  const db = new Database(p.ledger, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Net charge per item from the sandbox's own records (amount - refunded), by mediabatch.item. */
export function sandboxNetByItem(sandbox: SandboxHandle, manifestName: string): Map<string, number> {
  const net = new Map<string, number>();
  for (const job of sandbox.records().jobs) {
    if (job.metadata['mediabatch.manifest'] !== manifestName) continue;
    const item = String(job.metadata['mediabatch.item']);
    net.set(item, (net.get(item) ?? 0) + job.amountMicros - job.refundedMicros);
  }
  return net;
}

/** `mediabatch status --json`, parsed. */
export async function statusJson(p: E2eProject): Promise<StatusJson> {
  const result = await runCli(['status', p.manifest, '--json', '--ledger', p.ledger], { cwd: p.dir });
  if (result.code !== 0) throw new Error(`status exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as StatusJson;
}

export interface StatusJson {
  manifest: string;
  totals: Record<string, number | string | null> & { spent_usd: string; refunded_usd: string };
  items: Array<{
    id: string;
    state: string;
    job_id: string | null;
    attempts: number;
    cost_usd: string;
    files: string[];
    error: { code: string; message: string } | null;
  }>;
}

/** Parses a `run --json` answer and indexes its items by id. */
export function itemsById(stdout: string): Map<string, StatusJson['items'][number]> {
  const report = JSON.parse(stdout) as StatusJson;
  return new Map(report.items.map((item) => [item.id, item]));
}

export interface MoneyTotals {
  chargedMicros: number;
  refundedMicros: number;
}

/** Charged and refunded totals of the ledger's attempts (plain SQL). */
export function ledgerMoney(p: E2eProject): MoneyTotals {
  return ledgerRows<MoneyTotals>(
    p,
    `SELECT COALESCE(SUM(amount_micros), 0) AS chargedMicros, COALESCE(SUM(refunded_micros), 0) AS refundedMicros
       FROM attempts`,
  )[0]!;
}

/** Charged and refunded totals of the sandbox's own jobs of one manifest. */
export function sandboxMoney(sandbox: SandboxHandle, manifestName: string): MoneyTotals {
  let chargedMicros = 0;
  let refundedMicros = 0;
  for (const job of sandbox.records().jobs) {
    if (job.metadata['mediabatch.manifest'] !== manifestName) continue;
    chargedMicros += job.amountMicros;
    refundedMicros += job.refundedMicros;
  }
  return { chargedMicros, refundedMicros };
}

/**
 * Ledger, sandbox and `status --json` money, side by side, so a test can assert that the three
 * agree: `ledger` and `sandbox` in micro-dollars, `status` as the decimal strings status prints
 * and `expectedStatus` as what they must be.
 */
export async function moneyViews(sandbox: SandboxHandle, p: E2eProject, manifestName: string) {
  const ledger = ledgerMoney(p);
  const status = await statusJson(p);
  const usd = (micros: number) => (micros / 1e6).toFixed(6);
  return {
    ledger,
    sandbox: sandboxMoney(sandbox, manifestName),
    status: { spent_usd: status.totals.spent_usd, refunded_usd: status.totals.refunded_usd },
    expectedStatus: {
      spent_usd: usd(ledger.chargedMicros - ledger.refundedMicros),
      refunded_usd: usd(ledger.refundedMicros),
    },
  };
}

/** The ledger's attempts, oldest first, with the columns tests look at. */
export function attemptRows(p: E2eProject) {
  return ledgerRows<{
    id: number;
    item_id: string;
    seq: number;
    idempotency_key: string;
    request_body: string;
    state: string;
    http_status: number | null;
    http_code: string | null;
    job_id: string | null;
    job_status: string | null;
    amount_micros: number;
    refunded_micros: number;
    error_code: string | null;
  }>(
    p,
    `SELECT id, item_id, seq, idempotency_key, request_body, state, http_status, http_code, job_id, job_status,
            amount_micros, refunded_micros, error_code FROM attempts ORDER BY id`,
  );
}

/** The sandbox's jobs of one manifest item, oldest first. */
export function jobsOfItem(sandbox: SandboxHandle, manifestName: string, itemId: string) {
  return sandbox
    .records()
    .jobs.filter(
      (job) =>
        job.metadata['mediabatch.manifest'] === manifestName && job.metadata['mediabatch.item'] === itemId,
    );
}

/** Every POST /videos/generation the sandbox saw with one of these Idempotency-Keys, in order. */
export function postsWithKeys(sandbox: SandboxHandle, keys: readonly string[]) {
  return sandbox
    .records()
    .requests.filter(
      (request) =>
        request.method === 'POST' && request.idempotencyKey !== null && keys.includes(request.idempotencyKey),
    );
}

/** Every POST /videos/generation the sandbox saw, in order. */
export function allPosts(sandbox: SandboxHandle) {
  return sandbox.records().requests.filter((request) => request.method === 'POST');
}

/**
 * A sandbox whose clock the test can move forward (`advance(seconds)`), so long jobs, URL lifetimes
 * and retention can be crossed without waiting; the clock otherwise runs with the wall clock.
 */
export async function startClockedSandbox(
  overrides: Partial<SandboxConfigInput> = {},
): Promise<{ sandbox: SandboxHandle; advance: (seconds: number) => void }> {
  let offsetMs = 0;
  const sandbox = await startSandbox(fastConfig(overrides), { port: 0, now: () => Date.now() + offsetMs });
  return {
    sandbox,
    advance: (seconds) => {
      offsetMs += Math.round(seconds * 1000);
    },
  };
}

/**
 * Resolves once `predicate` holds, checking every few milliseconds (sandbox records, files, rows);
 * a predicate that throws (a ledger not created yet) counts as not holding.
 */
export async function waitUntil(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  what = 'a condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const holds = async () => {
    try {
      return await predicate();
    } catch {
      return false;
    }
  };
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Every file below `dir`, as paths relative to it, sorted. */
export function filesBelow(dir: string): string[] {
  const found: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      // The folder's owner marker is bookkeeping, not an output (test/e2e/run/output-owner.test.ts);
      // so is the gallery page every run leaves at the top (test/e2e/gallery/run-gallery.test.ts).
      else if (path !== OWNER_MARKER && !(path === 'index.html' && isGalleryPage(readHead(join(dir, path)))))
        found.push(path);
    }
  };
  if (existsSync(dir)) walk('');
  return found.sort();
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** The sandbox's requests with this method whose path starts with `prefix`. */
export function requestsTo(sandbox: SandboxHandle, method: string, prefix: string) {
  return sandbox
    .records()
    .requests.filter((entry) => entry.method === method && entry.path.startsWith(prefix));
}

/** GET /jobs/{id} requests (one job each), not the list. */
export function jobFetches(sandbox: SandboxHandle) {
  return requestsTo(sandbox, 'GET', '/v1/jobs/');
}

/** Asserts what every finished batch must satisfy: each item one net-charged job, files as the sandbox made them. */
export function checkSavedOutputs(
  sandbox: SandboxHandle,
  p: E2eProject,
  manifestName: string,
  itemIds: string[],
): { problems: string[] } {
  const problems: string[] = [];
  const net = sandboxNetByItem(sandbox, manifestName);
  const jobs = sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === manifestName);
  for (const id of itemIds) {
    const paid = jobs.filter((job) => job.metadata['mediabatch.item'] === id && job.status === 'succeeded');
    if (paid.length !== 1) problems.push(`${id}: ${paid.length} succeeded jobs`);
    const price = paid[0]?.amountMicros ?? -1;
    if (net.get(id) !== price) problems.push(`${id}: net charge ${net.get(id)} for one job of ${price}`);
    const file = join(p.outDir, `${id}.mp4`);
    if (!existsSync(file)) problems.push(`${id}: no file`);
    else if (paid[0] && sha256File(file) !== paid[0].files[0]?.sha256) problems.push(`${id}: sha256 differs`);
    const [saved] = ledgerRows<{ path: string; sha256: string; bytes: number }>(
      p,
      `SELECT f.path, f.sha256, f.bytes FROM files f JOIN attempts a ON a.id = f.attempt_id
        WHERE a.item_id = ? ORDER BY a.seq DESC LIMIT 1`,
      id,
    );
    // The ledger stores a path relative to the manifest's folder (src/ledger/batch-paths.ts).
    if (
      saved === undefined ||
      resolve(dirname(p.manifest), saved.path) !== file ||
      saved.sha256 !== paid[0]?.files[0]?.sha256 ||
      saved.bytes !== paid[0]?.files[0]?.bytes
    )
      problems.push(`${id}: the ledger's file record does not match`);
  }
  const temps = filesBelow(p.dir).filter((path) => path.endsWith('.mbtmp'));
  if (temps.length > 0) problems.push(`temporary files left: ${temps.join(', ')}`);
  return { problems };
}

/**
 * Replays the ledger's event log and returns the highest spent + reserved the runner ever held
 * (the budget rule: it must never pass budget_usd, even with several POSTs in flight).
 */
export function ledgerBudgetHighWater(p: E2eProject): number {
  const events = ledgerRows<{ attempt_id: number | null; kind: string; detail: string | null }>(
    p,
    'SELECT attempt_id, kind, detail FROM events ORDER BY id',
  );
  const reserved = new Map<number, number>();
  const charged = new Map<number, number>();
  let spent = 0;
  let high = 0;
  for (const event of events) {
    const detail = event.detail === null ? {} : (JSON.parse(event.detail) as Record<string, unknown>);
    const id = event.attempt_id ?? -1;
    if (event.kind === 'attempt_prepared') reserved.set(id, Number(detail.reserved ?? 0));
    else if (event.kind === 'attempt_rejected') reserved.delete(id);
    else if (event.kind === 'job_accepted') {
      reserved.delete(id);
      const amount = Number(detail.amount ?? 0);
      charged.set(id, amount);
      spent += detail.status === 'failed' || detail.status === 'canceled' ? 0 : amount;
    } else if (event.kind === 'job_status' && (detail.status === 'failed' || detail.status === 'canceled')) {
      spent -= charged.get(id) ?? 0;
    }
    high = Math.max(high, spent + [...reserved.values()].reduce((a, b) => a + b, 0));
  }
  return high;
}

/**
 * The highest net charge the sandbox ever held for one manifest: at each job's creation, the
 * amounts of the jobs created so far minus the refunds of those already ended unsuccessfully.
 */
export function sandboxSpendHighWater(sandbox: SandboxHandle, manifestName: string): number {
  const jobs = sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === manifestName);
  let high = 0;
  for (const at of jobs.map((job) => Date.parse(job.createdAt))) {
    let net = 0;
    for (const job of jobs) {
      if (Date.parse(job.createdAt) > at) continue;
      const refunded = job.completedAt !== null && Date.parse(job.completedAt) <= at ? job.refundedMicros : 0;
      net += job.amountMicros - refunded;
    }
    high = Math.max(high, net);
  }
  return high;
}

/** Spawns a run, waits for `ready` (a line of output, a sandbox event), then kills it with SIGKILL. */
export async function killRunWhen(
  sandbox: SandboxHandle,
  p: E2eProject,
  ready: (child: ChildProcess) => Promise<unknown>,
): Promise<void> {
  const { child, done } = spawnRun(sandbox, p);
  let killed = false;
  const exited = done.then((result) => {
    if (!killed) throw new Error(`the run exited ${result.code} before the kill:\n${result.stderr}`);
  });
  exited.catch(() => undefined);
  await Promise.race([ready(child), exited]);
  killed = true;
  child.kill('SIGKILL');
  const result = await done;
  if (result.signal !== 'SIGKILL') throw new Error(`the run ended with ${result.code} before the kill`);
}

/**
 * Leaves the ledger with an attempt (of the manifest's only item) whose POST never got an answer
 * although the service stored its job: the run is killed while the service is slow to answer.
 */
export async function unansweredSubmission(sandbox: SandboxHandle, p: E2eProject, manifestName: string) {
  const posts = () => sandbox.records().requests.filter((request) => request.method === 'POST');
  sandbox.update({ faults: { latency_ms: { min: 600, max: 600 } } });
  await killRunWhen(sandbox, p, () => waitUntil(() => posts().length === 1, 10_000, 'the POST'));
  await waitUntil(() => sandbox.records().jobs.length === 1, 10_000, 'the job to be stored');
  sandbox.update({ faults: { latency_ms: { min: 0, max: 0 } } });
  const attempts = ledgerRows<{ idempotency_key: string; request_body: string; state: string }>(
    p,
    'SELECT idempotency_key, request_body, state FROM attempts',
  );
  const job = sandbox.records().jobs[0]!;
  if (
    attempts.length !== 1 ||
    attempts[0]!.state !== 'prepared' ||
    job.idempotencyKey !== attempts[0]!.idempotency_key
  )
    throw new Error(`expected one unanswered attempt with the job's key, got ${JSON.stringify(attempts)}`);
  if (job.metadata['mediabatch.manifest'] !== manifestName)
    throw new Error('the job is not of this manifest');
  return { key: attempts[0]!.idempotency_key, body: attempts[0]!.request_body, job };
}

/** The ledger's charged and refunded totals equal the sandbox's, and status --json agrees. */
export async function expectMoneyAgrees(sandbox: SandboxHandle, p: E2eProject, name: string): Promise<void> {
  const money = await moneyViews(sandbox, p, name);
  expect(money.ledger).toEqual(money.sandbox);
  expect(money.status).toEqual(money.expectedStatus);
}

/** Runs the manifest again and asserts its exit code and that it sent no POST at all. */
export async function expectRerunSendsNothing(
  sandbox: SandboxHandle,
  p: E2eProject,
  exitCode: number,
  args: string[] = [],
): Promise<void> {
  const posts = allPosts(sandbox).length;
  const again = await runAgainst(sandbox, p, args);
  expect(again.code, again.stderr).toBe(exitCode);
  expect(allPosts(sandbox)).toHaveLength(posts);
}
