import { afterEach, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  attemptRows,
  cliEnv,
  expectMoneyAgrees,
  fastConfig,
  itemsById,
  jobsOfItem,
  killRunWhen,
  manifestYaml,
  runAgainst,
  startClockedSandbox,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';
import { itemStates, ownProject, routeBlockingProxy, takeItems } from '../../support/services.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const SIX = ['a', 'b', 'c', 'd', 'e', 'f'];

describe('only per-item causes fail an item', () => {
  it('jobs the service does not know stop the run (exit 3), named, their items untouched', async () => {
    const clocked = await startClockedSandbox({ running_seconds: { min: 30, max: 30 } });
    const p = ownProject('lost', `${manifestYaml('lost', 'concurrency: 2\n')}${takeItems(['a', 'b', 'c'])}`);
    await killRunWhen(clocked.sandbox, p, () =>
      waitUntil(
        () => attemptRows(p).filter((row) => row.state === 'accepted').length === 2,
        10_000,
        'two jobs',
      ),
    );
    const port = clocked.sandbox.port;
    await clocked.sandbox.close();
    // The same address, but a service that lost its records (a sandbox restarted without its state).
    sandbox = await startSandbox(fastConfig(), { port });
    const before = itemStates(p);
    // No --poll-interval: the first job is fetched to learn the interval, and is unknown too.
    const run = await runCli(['run', p.manifest], { cwd: p.dir, env: cliEnv(sandbox) });
    expect(run.code, run.stderr).toBe(3);
    const jobs = attemptRows(p).map((row) => `${row.job_id} (${row.item_id})`);
    expect(run.stdout).toContain(`the service does not know 2 job(s) this ledger holds: ${jobs.join(', ')}`);
    expect(run.stdout).toContain('nothing was resubmitted');
    expect(itemStates(p)).toEqual(before);
    expect(before).toEqual({ a: 'in_flight', b: 'in_flight', c: 'pending' });
    expect(allPosts(sandbox)).toHaveLength(0);
    expect(sandbox.records().jobs).toHaveLength(0);
  });

  it('stop-loss: three items in a row refused alike stop the run before the rest is submitted', async () => {
    sandbox = await startTestSandbox();
    const p = ownProject(
      'typo',
      `${manifestYaml('typo', 'model: acme-video-9\nconcurrency: 1\n')}${takeItems(SIX)}`,
    );
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain('stopped: 3 items in a row failed with invalid_parameter on model');
    expect(run.stdout).toContain('so nothing more was submitted');
    // One slot, so answers come in item order: three refusals, then nothing more was sent.
    expect(allPosts(sandbox).map((post) => post.status)).toEqual([400, 400, 400]);
    const states = Object.values(itemStates(p));
    expect(states.filter((state) => state === 'failed:invalid_parameter')).toHaveLength(3);
    expect(states.filter((state) => state === 'pending')).toHaveLength(3);
    expect(sandbox.records().jobs).toHaveLength(0);
    await expectMoneyAgrees(sandbox, p, 'typo');
  });

  it('--retry-failed, after the fix, says what it resubmits and what it may cost, then pays once each', async () => {
    sandbox = await startTestSandbox();
    const yaml = (model: string) =>
      `${manifestYaml('fixed', `model: ${model}\nconcurrency: 1\nmax_cost_usd: "0.10"\n`)}items:
  - {id: a, prompt: "take a"}
  - {id: b, prompt: "take b"}
  - {id: c, prompt: "take c"}
  - {id: shy, prompt: "s [[fail:content_rejectedx1]]"}
`;
    const p = ownProject('fixed', yaml('acme-video-9'));
    const first = await runAgainst(sandbox, p);
    expect(first.code).toBe(1);
    expect(itemStates(p)).toEqual({
      a: 'failed:invalid_parameter',
      b: 'failed:invalid_parameter',
      c: 'failed:invalid_parameter',
      shy: 'pending',
    });
    // The model is part of each item's request: the fixed items are changed, so they go out anyway.
    const { writeFileSync } = await import('node:fs');
    writeFileSync(p.manifest, yaml('acme-video-2'));
    const fixed = await runAgainst(sandbox, p);
    expect(fixed.code).toBe(1);
    expect(itemStates(p)).toEqual({ a: 'done', b: 'done', c: 'done', shy: 'failed:content_rejected' });

    const again = await runAgainst(sandbox, p);
    expect(again.code).toBe(1);
    expect(jobsOfItem(sandbox, 'fixed', 'shy')).toHaveLength(1);

    const retried = await runAgainst(sandbox, p, ['--retry-failed']);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain(
      '--retry-failed: 1 failed item(s) go out again with new keys (content_rejected: 1), for about $0.04 more',
    );
    // The plan line before it says the same: one to retry, not "nothing to submit".
    expect(retried.stdout).toContain('Plan: 1 to retry, 3 unchanged;');
    expect(retried.stdout).not.toContain('nothing to submit');
    const jobs = jobsOfItem(sandbox, 'fixed', 'shy');
    expect(jobs.map((job) => job.status)).toEqual(['failed', 'succeeded']);
    expect(new Set(jobs.map((job) => job.idempotencyKey)).size).toBe(2);
    expect(itemStates(p).shy).toBe('done');
    await expectMoneyAgrees(sandbox, p, 'fixed');
  });

  it('a 404 on submissions (a misrouted gateway) stops the run and fails no item', async () => {
    sandbox = await startTestSandbox();
    const gateway = await routeBlockingProxy(sandbox.baseUrl, (method) => method === 'POST');
    const p = ownProject('gateway', `${manifestYaml('gateway')}${takeItems(SIX)}`);
    const run = await runAgainst(sandbox, p, ['--base-url', gateway.baseUrl, '--json']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the service has no route for submissions');
    const report = itemsById(run.stdout);
    expect([...report.values()].every((item) => item.state === 'pending' && item.error === null)).toBe(true);
    // At most the first slots' worth of attempts, each closed as refused: no job, nothing reserved.
    const attempts = attemptRows(p);
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.length).toBeLessThanOrEqual(3);
    expect(attempts.every((row) => row.state === 'rejected' && row.http_status === 404)).toBe(true);
    expect(sandbox.records().jobs).toHaveLength(0);
    expect(allPosts(sandbox)).toHaveLength(0);
    await expectMoneyAgrees(sandbox, p, 'gateway');
  });
});
