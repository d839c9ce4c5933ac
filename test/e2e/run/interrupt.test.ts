import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { MediaGenClient } from '../../../src/service-client/index.js';
import { runCli, waitForOutput } from '../../support/cli.js';
import {
  checkSavedOutputs,
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

const workspace = [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 10 }];
const ids = ['a', 'b', 'c', 'd', 'e'];
const itemsYaml = (list: string[]) =>
  `items:\n${list.map((id) => `  - {id: ${id}, prompt: take ${id}}\n`).join('')}`;
const posts = () => requestsTo(sandbox, 'POST', '/v1/videos').length;
const batchJobs = (name: string) =>
  sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name);

function itemStates(p: { ledger: string }): Record<string, string> {
  const rows = ledgerRows<{ item_id: string; state: string }>(
    p as never,
    'SELECT item_id, state FROM items ORDER BY item_id',
  );
  return Object.fromEntries(rows.map((row) => [row.item_id, row.state]));
}

function ledgerCounts(p: { ledger: string }): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const table of ['batches', 'items', 'attempts', 'files', 'runs'])
    counts[table] = ledgerRows<{ n: number }>(p as never, `SELECT COUNT(*) AS n FROM ${table}`)[0]!.n;
  return counts;
}

describe('mediabatch run: interruption', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s once: no new submission, in-flight jobs finish and are saved, exit 130, a re-run completes',
    async (signal) => {
      // Jobs last 30 s on the sandbox's clock, which moves on only once the signal was taken.
      const clocked = await startClockedSandbox({
        workspaces: workspace,
        running_seconds: { min: 30, max: 30 },
      });
      sandbox = clocked.sandbox;
      const p = project('drain', `${manifestYaml('drain', 'concurrency: 2\n')}${itemsYaml(ids)}`);
      const { child, done } = spawnRun(sandbox, p);
      await waitForOutput(child, (text) => text.includes(': in flight'));
      await waitUntil(() => batchJobs('drain').length === 2, 10_000, 'two accepted jobs');
      child.kill(signal);
      const postsAtSignal = posts();
      await waitForOutput(child, (text) => text.includes('stopping'));
      clocked.advance(31);
      const result = await done;
      expect(result.code, result.stderr).toBe(130);
      expect(result.stdout).toContain('stopping: no new submissions');
      expect(posts()).toBe(postsAtSignal);
      const jobs = batchJobs('drain');
      expect(jobs).toHaveLength(2);
      const started = jobs.map((job) => String(job.metadata['mediabatch.item'])).sort();
      expect(jobs.every((job) => job.status === 'succeeded')).toBe(true);
      expect(checkSavedOutputs(sandbox, p, 'drain', started).problems).toEqual([]);
      const states = itemStates(p);
      expect(ids.filter((id) => states[id] === 'done').sort()).toEqual(started);
      expect(ids.filter((id) => states[id] === 'pending')).toHaveLength(3);

      sandbox.update({ running_seconds: { min: 0.2, max: 0.2 } });
      const rerun = await runAgainst(sandbox, p);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(batchJobs('drain')).toHaveLength(5);
      expect(checkSavedOutputs(sandbox, p, 'drain', ids).problems).toEqual([]);
    },
  );

  it('SIGINT while waiting for a slot held by another client gives up that submission', async () => {
    const clocked = await startClockedSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 1 }],
    });
    sandbox = clocked.sandbox;
    const other = new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey });
    const body = { input: { prompt: 'another client [[run:30]]', seconds: 2, definition: '480p' } };
    await other.createVideoJob(JSON.stringify(body), 'other-client');
    const p = project('blocked', `${manifestYaml('blocked', 'concurrency: 1\n')}${itemsYaml(['a', 'b'])}`);
    const { child, done } = spawnRun(sandbox, p);
    await waitUntil(() => requestsTo(sandbox, 'POST', '/v1/videos').some((entry) => entry.status === 429));
    child.kill('SIGINT');
    const result = await done;
    expect(result.code, result.stderr).toBe(130);
    // The 429 proved no job exists: nothing was paid for after the signal, however long the slot stays taken.
    expect(batchJobs('blocked')).toHaveLength(0);
    expect(Object.values(itemStates(p))).toEqual(['pending', 'pending']);
    expect(
      ledgerRows<{ n: number }>(p, "SELECT COUNT(*) AS n FROM attempts WHERE state = 'prepared'")[0]!.n,
    ).toBe(0);

    clocked.advance(31);
    const rerun = await runAgainst(sandbox, p);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(checkSavedOutputs(sandbox, p, 'blocked', ['a', 'b']).problems).toEqual([]);
  });

  it('SIGINT twice exits 130 at once, leaves a sound ledger, and a re-run pays once per item', async () => {
    const clocked = await startClockedSandbox({
      workspaces: workspace,
      running_seconds: { min: 30, max: 30 },
    });
    sandbox = clocked.sandbox;
    const p = project(
      'hard-stop',
      `${manifestYaml('hard-stop', 'concurrency: 2\n')}${itemsYaml(['a', 'b', 'c'])}`,
    );
    const { child, done } = spawnRun(sandbox, p);
    await waitForOutput(child, (text) => text.includes(': in flight'));
    await waitUntil(() => batchJobs('hard-stop').length === 2, 10_000, 'two accepted jobs');
    child.kill('SIGINT');
    await waitForOutput(child, (text) => text.includes('stopping'));
    const stoppedAt = Date.now();
    child.kill('SIGINT');
    const result = await done;
    expect(result.code, result.stderr).toBe(130);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    // It says where things stand and how to go on, not just 130.
    expect(result.stderr).toContain('mediabatch run: stopped at once (0 done, 2 in flight, 1 pending)');
    expect(result.stderr).toContain(`saved, never paid again, by the next run: mediabatch run ${p.manifest}`);
    // It did not wait for its jobs: they are still running at the service.
    expect(batchJobs('hard-stop').every((job) => job.status === 'running' || job.status === 'queued')).toBe(
      true,
    );
    const db = new Database(p.ledger, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();

    clocked.advance(31);
    sandbox.update({ running_seconds: { min: 0.2, max: 0.2 } });
    const rerun = await runAgainst(sandbox, p);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(batchJobs('hard-stop')).toHaveLength(3);
    expect(checkSavedOutputs(sandbox, p, 'hard-stop', ['a', 'b', 'c']).problems).toEqual([]);
  });
});

describe('mediabatch run: one live run per ledger', () => {
  it('a second run exits 3 at once and changes nothing; after a SIGKILL the lock is free', async () => {
    const clocked = await startClockedSandbox({ running_seconds: { min: 30, max: 30 } });
    sandbox = clocked.sandbox;
    const p = project('locked', `${manifestYaml('locked')}${itemsYaml(['a'])}`);
    const first = spawnRun(sandbox, p);
    await waitUntil(() => batchJobs('locked').length === 1, 10_000, 'the first run to submit');
    await waitUntil(
      () =>
        ledgerRows<{ n: number }>(p, "SELECT COUNT(*) AS n FROM attempts WHERE job_status = 'running'")[0]!
          .n === 1,
      10_000,
      'the running job to be committed',
    );
    const counts = ledgerCounts(p);
    const attempts = ledgerRows(p, 'SELECT * FROM attempts');
    const requestsBefore = sandbox.records().requests.length;

    const startedAt = Date.now();
    const second = await runAgainst(sandbox, p);
    expect(second.code, second.stderr).toBe(3);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(second.stderr).toContain('held by another live run');
    expect(ledgerCounts(p)).toEqual(counts);
    expect(ledgerRows(p, 'SELECT * FROM attempts')).toEqual(attempts);
    // The second run sent nothing at all; only the first run's polls reached the service.
    expect(requestsTo(sandbox, 'POST', '/v1/videos')).toHaveLength(1);
    expect(
      sandbox
        .records()
        .requests.slice(requestsBefore)
        .every((entry) => entry.method === 'GET' && entry.path.startsWith('/v1/jobs')),
    ).toBe(true);

    first.child.kill('SIGKILL');
    await first.done;
    clocked.advance(31);
    const third = await runAgainst(sandbox, p, ['--json']);
    expect(third.code, third.stderr).toBe(0);
    expect(batchJobs('locked')).toHaveLength(1);
    expect(checkSavedOutputs(sandbox, p, 'locked', ['a']).problems).toEqual([]);
  });
});

describe('mediabatch run: exit codes', () => {
  it('exits 1 when an item fails or does not fit in the budget, and says why', async () => {
    sandbox = await startTestSandbox();
    const failing = project(
      'rejected',
      `${manifestYaml('rejected')}items:\n  - {id: ok, prompt: fine}\n  - {id: bad, prompt: "nope [[fail:content_rejected]]"}\n`,
    );
    const failed = await runAgainst(sandbox, failing, ['--json']);
    expect(failed.code, failed.stderr).toBe(1);
    expect(JSON.parse(failed.stdout).items[1]).toMatchObject({
      state: 'failed',
      error: { code: 'content_rejected' },
    });

    // Each 2-second 480p job costs 0.04: only one fits in 0.05.
    const tight = project(
      'tight',
      `${manifestYaml('tight', 'budget_usd: "0.05"\n')}${itemsYaml(['a', 'b'])}`,
    );
    const over = await runAgainst(sandbox, tight, ['--json']);
    expect(over.code, over.stderr).toBe(1);
    const states = JSON.parse(over.stdout).items.map((item: { state: string }) => item.state);
    expect(states.sort()).toEqual(['budget_exceeded', 'done']);
  });

  it('exits 2 for a bad manifest or a missing service, submitting nothing, and 3 for a refused key', async () => {
    sandbox = await startTestSandbox();
    const bad = project('typo', `version: 1\nname: typo\nitems:\n  - {id: a, promt: oops}\n`);
    const result = await runAgainst(sandbox, bad);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/batch\.yaml:4:\d+: items\[0\]/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(sandbox.records().requests).toHaveLength(0);

    const good = project('nowhere', `${manifestYaml('nowhere')}${itemsYaml(['a'])}`);
    const noService = await runCli(['run', good.manifest], {
      cwd: good.dir,
      env: { MEDIAGEN_API_KEY: sandbox.apiKey },
    });
    expect(noService.code, noService.stderr).toBe(2);
    expect(noService.stderr).toContain('--sandbox');
    expect(noService.stderr).not.toMatch(/\n\s+at /);

    const refused = await runAgainst(sandbox, good, [], { MEDIAGEN_API_KEY: 'mg_unknown_key_0000000000' });
    expect(refused.code, refused.stderr).toBe(3);
    expect(requestsTo(sandbox, 'POST', '/v1/videos').every((entry) => entry.status === 401)).toBe(true);
    expect(sandbox.records().jobs).toHaveLength(0);
  });
});
