import { afterEach, describe, expect, it } from 'vitest';
import { type SandboxHandle, type SandboxRecords, startSandbox } from '../../../src/sandbox/index.js';
import { MediaGenClient } from '../../../src/service-client/index.js';
import { runCli } from '../../support/cli.js';
import {
  checkSavedOutputs,
  cliEnv,
  fastConfig,
  jobFetches,
  ledgerRows,
  manifestYaml,
  project,
  requestsTo,
  runAgainst,
  spawnRun,
  startClockedSandbox,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

type RecordedJob = SandboxRecords['jobs'][number];

/** The largest number of these jobs unfinished at one instant, from the sandbox's own timeline. */
function maxOverlap(jobs: RecordedJob[]): number {
  const events: Array<[number, number]> = [];
  for (const job of jobs) {
    events.push([Date.parse(job.createdAt), 1]);
    events.push([job.completedAt ? Date.parse(job.completedAt) : Number.POSITIVE_INFINITY, -1]);
  }
  // At equal times a completion frees its slot before a creation takes one.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let max = 0;
  for (const [, delta] of events) {
    current += delta;
    max = Math.max(max, current);
  }
  return max;
}

function batchJobs(name: string): RecordedJob[] {
  return sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name);
}

function items(count: number, prompt = 'shot'): { ids: string[]; yaml: string } {
  const ids = Array.from({ length: count }, (_, index) => `i${String(index).padStart(3, '0')}`);
  return { ids, yaml: `items:\n${ids.map((id) => `  - {id: ${id}, prompt: ${prompt} ${id}}\n`).join('')}` };
}

function workspace(limit: number) {
  return [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: limit }];
}

describe('mediabatch run: watching through the job list', () => {
  it('pages through GET /jobs with 120 jobs in flight and fetches each job only once it leaves', async () => {
    // Jobs last 30 s on the sandbox's clock, which jumps once all 120 are in flight and being paged.
    const clocked = await startClockedSandbox({
      workspaces: workspace(120),
      running_seconds: { min: 30, max: 30 },
    });
    sandbox = clocked.sandbox;
    const { ids, yaml } = items(120);
    const p = project('wide', `${manifestYaml('wide', 'concurrency: 120\n')}${yaml}`);
    const run = spawnRun(sandbox, p, ['--json']);
    await waitUntil(
      () =>
        batchJobs('wide').length === 120 &&
        requestsTo(sandbox, 'GET', '/v1/jobs').some((entry) => entry.query?.includes('cursor=')),
      20_000,
      '120 jobs listed over two pages',
    );
    clocked.advance(31);
    const result = await run.done;
    expect(result.stderr).toBe('');
    expect(result.code, result.stderr).toBe(0);

    const jobs = batchJobs('wide');
    expect(jobs).toHaveLength(120);
    expect(maxOverlap(jobs)).toBe(120);
    const all = requestsTo(sandbox, 'GET', '/v1/jobs').filter((entry) => entry.path === '/v1/jobs');
    // A new ledger first looks once for jobs it does not know (docs/import.md), before any POST;
    // every later list call is a look at this batch's jobs: every status, created since the oldest
    // unfinished one, full pages (docs/performance.md).
    const requests = sandbox.records().requests;
    const firstPost = requests.findIndex((entry) => entry.method === 'POST');
    const checks = requests
      .slice(0, firstPost)
      .filter((entry) => entry.method === 'GET' && entry.path === '/v1/jobs');
    expect(checks).toHaveLength(1);
    const lists = all.slice(checks.length);
    expect(lists.length).toBeGreaterThan(0);
    for (const entry of lists) {
      const query = new URLSearchParams(entry.query ?? '');
      expect(query.get('status')).toBeNull();
      expect(query.get('created_after')).not.toBeNull();
      expect(query.get('limit')).toBe('100');
    }
    // More than 100 unfinished jobs: the second page was asked for with the first page's cursor.
    expect(lists.some((entry) => new URLSearchParams(entry.query ?? '').has('cursor'))).toBe(true);
    // No per-job polling loop: one GET /jobs/{id} per job leaving the list, plus a few at most.
    expect(jobFetches(sandbox).length).toBeLessThanOrEqual(120 + 5);
    expect(checkSavedOutputs(sandbox, p, 'wide', ids).problems).toEqual([]);
  });

  it('follows next_cursor through pages shorter than the limit', async () => {
    sandbox = await startTestSandbox({ workspaces: workspace(30), page_size_cap: 7 });
    const { ids, yaml } = items(24);
    const p = project('short-pages', `${manifestYaml('short-pages', 'concurrency: 30\n')}${yaml}`);
    const result = await runAgainst(sandbox, p, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).totals).toMatchObject({ items: 24, done: 24 });
    const cursors = requestsTo(sandbox, 'GET', '/v1/jobs').filter((entry) =>
      new URLSearchParams(entry.query ?? '').has('cursor'),
    );
    expect(cursors.length).toBeGreaterThan(0);
    expect(jobFetches(sandbox).length).toBeLessThanOrEqual(24 + 5);
    expect(checkSavedOutputs(sandbox, p, 'short-pages', ids).problems).toEqual([]);
  });

  it('stops (exit 3) when the service does not know a watched job, leaving its item as it was', async () => {
    const clocked = await startClockedSandbox({ running_seconds: { min: 30, max: 30 } });
    const p = project('unknown', `${manifestYaml('unknown')}${items(1).yaml}`);
    const { child, done } = spawnRun(clocked.sandbox, p);
    await waitUntil(
      () =>
        ledgerRows<{ n: number }>(p, `SELECT COUNT(*) AS n FROM attempts WHERE state = 'accepted'`)[0]!.n > 0,
      10_000,
      'the accepted job',
    );
    child.kill('SIGKILL');
    await done;
    const port = clocked.sandbox.port;
    await clocked.sandbox.close();
    // The same address, but a service that lost its records (a reset sandbox).
    sandbox = await startSandbox(fastConfig(), { port });
    const [attempt] = ledgerRows<{ job_id: string }>(p, 'SELECT job_id FROM attempts');
    const result = await runCli(['run', p.manifest, '--poll-interval', '0.1', '--json'], {
      cwd: p.dir,
      env: cliEnv(sandbox),
      timeoutMs: 15_000,
    });
    expect(result.signal).toBeNull();
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain(`the service does not know job ${attempt!.job_id}`);
    expect(JSON.parse(result.stdout).items[0]).toMatchObject({ state: 'in_flight', error: null });
    expect(jobFetches(sandbox).length).toBeLessThanOrEqual(2);
    expect(requestsTo(sandbox, 'POST', '/v1/videos')).toHaveLength(0);
  });
});

describe('mediabatch run: concurrency', () => {
  it('keeps at most the manifest concurrency unfinished when the account allows more', async () => {
    sandbox = await startTestSandbox({ workspaces: workspace(6), running_seconds: { min: 0.3, max: 0.3 } });
    const { ids, yaml } = items(8);
    const p = project('narrow', `${manifestYaml('narrow', 'concurrency: 2\n')}${yaml}`);
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    expect(maxOverlap(batchJobs('narrow'))).toBe(2);
    expect(checkSavedOutputs(sandbox, p, 'narrow', ids).problems).toEqual([]);
  });

  it('keeps at most the account limit unfinished and refills a slot as soon as it frees', async () => {
    const runSeconds = 0.4;
    sandbox = await startTestSandbox({
      workspaces: workspace(3),
      queued_seconds: 0.05,
      running_seconds: { min: runSeconds, max: runSeconds },
    });
    const { ids, yaml } = items(12);
    const p = project('refill', `${manifestYaml('refill', 'concurrency: 10\n')}${yaml}`);
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    const jobs = batchJobs('refill');
    expect(jobs).toHaveLength(12);
    expect(maxOverlap(jobs)).toBe(3);
    // The runner counted its own slots: the service never had to refuse a submission.
    expect(requestsTo(sandbox, 'POST', '/v1/videos').every((entry) => entry.status === 202)).toBe(true);
    // Four waves of 0.45 s; each refill waits at most one poll (0.1 s) plus request time.
    const start = Math.min(...jobs.map((job) => Date.parse(job.createdAt)));
    const end = Math.max(...jobs.map((job) => Date.parse(job.completedAt!)));
    const ideal = 4 * (0.05 + runSeconds) * 1000;
    expect(end - start).toBeGreaterThanOrEqual(ideal);
    expect(end - start).toBeLessThan(ideal * 2);
    expect(checkSavedOutputs(sandbox, p, 'refill', ids).problems).toEqual([]);
  });

  it('waits out slots taken by another client of the workspace (429) with the same key', async () => {
    const clocked = await startClockedSandbox({ workspaces: workspace(3) });
    sandbox = clocked.sandbox;
    const other = new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey });
    await other.createVideoJob(
      JSON.stringify({ input: { prompt: 'someone else [[run:30]]', seconds: 2, definition: '480p' } }),
      'other-client-1',
    );
    const { ids, yaml } = items(5);
    const p = project('shared', `${manifestYaml('shared', 'concurrency: 3\n')}${yaml}`);
    const run = spawnRun(sandbox, p);
    await waitUntil(() => requestsTo(sandbox, 'POST', '/v1/videos').some((entry) => entry.status === 429));
    clocked.advance(31);
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    const posts = requestsTo(sandbox, 'POST', '/v1/videos');
    const refused = posts.filter((entry) => entry.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    // A 429 is answered by resending the same request, not by a new attempt.
    for (const entry of refused)
      expect(
        posts.some((later) => later.idempotencyKey === entry.idempotencyKey && later.status === 202),
      ).toBe(true);
    expect(batchJobs('shared')).toHaveLength(5);
    expect(checkSavedOutputs(sandbox, p, 'shared', ids).problems).toEqual([]);
  });
});
