import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  attemptRows,
  type E2eProject,
  expectMoneyAgrees,
  expectRerunSendsNothing,
  itemsById,
  jobsOfItem,
  manifestYaml,
  postsWithKeys,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

/** Every job of the item: failed ones refunded in full, attempt numbers 1, 2, ..., keys all different. */
function expectAttemptTrail(name: string, p: E2eProject, itemId: string, statuses: string[]) {
  const jobs = jobsOfItem(sandbox, name, itemId);
  expect(jobs.map((job) => job.status)).toEqual(statuses);
  expect(jobs.map((job) => job.metadata['mediabatch.attempt'])).toEqual(
    statuses.map((_, i) => String(i + 1)),
  );
  expect(new Set(jobs.map((job) => job.idempotencyKey)).size).toBe(jobs.length);
  for (const job of jobs) {
    expect(job.refundedMicros).toBe(job.status === 'succeeded' ? 0 : job.amountMicros);
    // One POST per key: a resubmission is a new key, never a resend of a failed job's key.
    expect(postsWithKeys(sandbox, [job.idempotencyKey]).map((request) => request.status)).toEqual([202]);
  }
  const rows = attemptRows(p).filter((row) => row.item_id === itemId);
  expect(rows.map((row) => [row.seq, row.job_id])).toEqual(jobs.map((job, i) => [i + 1, job.id]));
  return jobs;
}

describe('mediabatch run: job failures', () => {
  it('resubmits model_busy, provider_unavailable, processing_failed and timeout with a new key', async () => {
    sandbox = await startTestSandbox({
      job_timeout_seconds: 0.6,
      workspaces: [{ id: 'ws_test', balance_usd: '10', concurrency_limit: 4 }],
    });
    const p = project(
      'retryable',
      `${manifestYaml('retryable', 'concurrency: 4\n')}items:
  - {id: busy, prompt: "b [[fail:model_busyx1]]"}
  - {id: provider, prompt: "p [[fail:provider_unavailablex1]]"}
  - {id: processing, prompt: "f [[fail:processing_failedx1]]"}
  - {id: slow, prompt: "t [[fail:timeoutx1]]"}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json'], { MEDIABATCH_MODEL_BUSY_SECONDS: '0.6' });
    expect(run.code).toBe(0);
    const items = itemsById(run.stdout);
    const codes = {
      busy: 'model_busy',
      provider: 'provider_unavailable',
      processing: 'processing_failed',
      slow: 'timeout',
    };
    for (const [itemId, code] of Object.entries(codes)) {
      expect(items.get(itemId)).toMatchObject({
        state: 'done',
        attempts: 2,
        cost_usd: '0.040000',
        error: null,
      });
      const jobs = expectAttemptTrail('retryable', p, itemId, ['failed', 'succeeded']);
      expect(jobs[0]!.errorCode).toBe(code);
      expect(items.get(itemId)!.job_id).toBe(jobs[1]!.id);
    }
    // The timed-out job ran into the sandbox's time limit, not a fast failure.
    const [timedOut] = jobsOfItem(sandbox, 'retryable', 'slow');
    expect(Date.parse(timedOut!.completedAt!) - Date.parse(timedOut!.createdAt)).toBe(600);
    // model_busy waits its own delay (MEDIABATCH_MODEL_BUSY_SECONDS, 0.6 s here), not poll intervals (0.1 s).
    const [busy, busyAgain] = jobsOfItem(sandbox, 'retryable', 'busy');
    expect(Date.parse(busyAgain!.createdAt) - Date.parse(busy!.completedAt!)).toBeGreaterThanOrEqual(600);
    await expectMoneyAgrees(sandbox, p, 'retryable');
  });

  it('fails the item on content_rejected, canceled and unknown codes, without resubmitting', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'final',
      `${manifestYaml('final')}items:
  - {id: rejected, prompt: "r [[fail:content_rejected]]"}
  - {id: canceled, prompt: "c [[fail:canceled]]"}
  - {id: weird, prompt: "w [[fail:weird_code]]"}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const items = itemsById(run.stdout);
    for (const [itemId, code, status] of [
      ['rejected', 'content_rejected', 'failed'],
      ['canceled', 'canceled', 'canceled'],
      ['weird', 'weird_code', 'failed'],
    ] as const) {
      expect(items.get(itemId)).toMatchObject({
        state: 'failed',
        attempts: 1,
        cost_usd: '0.000000',
        error: { code },
      });
      expectAttemptTrail('final', p, itemId, [status]);
    }
    await expectMoneyAgrees(sandbox, p, 'final');

    await expectRerunSendsNothing(sandbox, p, 1, ['--json']);
  });

  it('gives up with retries_exhausted past `retries`, and a re-run tries again', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'exhausted',
      `${manifestYaml('exhausted', 'retries: 1\n')}items:
  - {id: twice, prompt: "x [[fail:processing_failedx2]]"}
  - {id: once, prompt: "y [[fail:provider_unavailablex1]]"}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const items = itemsById(run.stdout);
    expect(items.get('twice')).toMatchObject({
      state: 'failed',
      attempts: 2,
      cost_usd: '0.000000',
      error: { code: 'retries_exhausted' },
    });
    expect(items.get('twice')!.error!.message).toContain('processing_failed');
    expectAttemptTrail('exhausted', p, 'twice', ['failed', 'failed']);
    expect(items.get('once')).toMatchObject({ state: 'done', attempts: 2 });
    expectAttemptTrail('exhausted', p, 'once', ['failed', 'succeeded']);
    await expectMoneyAgrees(sandbox, p, 'exhausted');

    // retries_exhausted is not final across runs: the next run submits a third attempt, which passes.
    const again = await runAgainst(sandbox, p, ['--json']);
    expect(again.code).toBe(0);
    expect(itemsById(again.stdout).get('twice')).toMatchObject({ state: 'done', attempts: 3, error: null });
    expectAttemptTrail('exhausted', p, 'twice', ['failed', 'failed', 'succeeded']);
    expectAttemptTrail('exhausted', p, 'once', ['failed', 'succeeded']);
    await expectMoneyAgrees(sandbox, p, 'exhausted');
  });

  it('with retries: 0 the first retryable failure is final for the run', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'noretry',
      `${manifestYaml('noretry', 'retries: 0\n')}items:
  - {id: a, prompt: "x [[fail:model_busyx1]]"}
  - {id: b, prompt: "plain"}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const items = itemsById(run.stdout);
    expect(items.get('a')).toMatchObject({
      state: 'failed',
      attempts: 1,
      error: { code: 'retries_exhausted' },
    });
    expect(items.get('b')).toMatchObject({ state: 'done', attempts: 1 });
    expectAttemptTrail('noretry', p, 'a', ['failed']);
    await expectMoneyAgrees(sandbox, p, 'noretry');
  });
});
