import { afterEach, describe, expect, it } from 'vitest';
import { openLedger } from '../../../src/ledger/open-ledger.js';
import { loadManifest } from '../../../src/manifest/index.js';
import { buildRequestBody, requestHash } from '../../../src/runner/request.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { MediaGenClient } from '../../../src/service-client/client.js';
import {
  allPosts,
  attemptRows,
  expectMoneyAgrees,
  expectRerunSendsNothing,
  itemsById,
  jobsOfItem,
  manifestYaml,
  postsWithKeys,
  project,
  runAgainst,
  spawnRun,
  startClockedSandbox,
  startTestSandbox,
  statusJson,
  waitUntil,
} from '../../support/e2e.js';
import { neverPaidTwice, runWatched } from '../../support/watchdog.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const PRICE = 40_000; // 2 s of 480p at 0.02 USD per second

describe('mediabatch run: submission outcomes', () => {
  it('records a queued 202, refunds and resubmits a 202 already failed, and fails a rejected prompt', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'answers',
      `${manifestYaml('answers')}items:
  - {id: ok, prompt: plain}
  - {id: flaky, prompt: "retry me [[reject:processing_failedx1]]"}
  - {id: banned, prompt: "nope [[reject:content_rejected]]"}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const items = itemsById(run.stdout);
    expect(items.get('ok')).toMatchObject({ state: 'done', attempts: 1, cost_usd: '0.040000' });
    expect(items.get('flaky')).toMatchObject({ state: 'done', attempts: 2, cost_usd: '0.040000' });
    expect(items.get('banned')).toMatchObject({
      state: 'failed',
      attempts: 1,
      cost_usd: '0.000000',
      error: { code: 'content_rejected' },
    });

    const flaky = jobsOfItem(sandbox, 'answers', 'flaky');
    expect(flaky.map((job) => [job.status, job.errorCode, job.metadata['mediabatch.attempt']])).toEqual([
      ['failed', 'processing_failed', '1'],
      ['succeeded', null, '2'],
    ]);
    expect(flaky[0]!.refundedMicros).toBe(flaky[0]!.amountMicros);
    expect(flaky[0]!.idempotencyKey).not.toBe(flaky[1]!.idempotencyKey);
    expect(items.get('flaky')!.job_id).toBe(flaky[1]!.id);

    const banned = jobsOfItem(sandbox, 'answers', 'banned');
    expect(banned).toHaveLength(1);
    expect(banned[0]).toMatchObject({ status: 'failed', amountMicros: PRICE, refundedMicros: PRICE });
    expect(postsWithKeys(sandbox, [banned[0]!.idempotencyKey])).toHaveLength(1);
    expect(attemptRows(p).filter((row) => row.item_id === 'banned')).toHaveLength(1);
    await expectMoneyAgrees(sandbox, p, 'answers');

    // A final job failure is not retried by a re-run of the same manifest either.
    await expectRerunSendsNothing(sandbox, p, 1, ['--json']);
  });

  it('resends the same key and body after a 500 or a dropped connection, before or after the store', async () => {
    sandbox = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '10', concurrency_limit: 4 }],
    });
    const p = project(
      'faulty',
      `${manifestYaml('faulty', 'concurrency: 4\n')}items:
  - {id: after500, prompt: "a [[500-after]]"}
  - {id: before500, prompt: "b [[500-beforex2]]"}
  - {id: dropBefore, prompt: "c [[drop-beforex1]]"}
  - {id: dropAfter, prompt: "d [[drop-after]]"}
`,
    );
    const run = await runWatched(sandbox, p, [neverPaidTwice('faulty')], ['--json']);
    expect(run.code).toBe(0);
    const items = itemsById(run.stdout);
    const expectedAnswers: Record<string, Array<number | 'dropped'>> = {
      after500: [500, 202],
      before500: [500, 500, 202],
      dropBefore: ['dropped', 202],
      dropAfter: ['dropped', 202],
    };
    const attempts = attemptRows(p);
    for (const [itemId, answers] of Object.entries(expectedAnswers)) {
      expect(items.get(itemId)).toMatchObject({ state: 'done', attempts: 1, cost_usd: '0.040000' });
      const rows = attempts.filter((row) => row.item_id === itemId);
      expect(rows).toHaveLength(1);
      const key = rows[0]!.idempotency_key;
      const jobs = jobsOfItem(sandbox, 'faulty', itemId);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ idempotencyKey: key, amountMicros: PRICE, refundedMicros: 0 });
      expect(rows[0]).toMatchObject({ job_id: jobs[0]!.id, amount_micros: PRICE });
      // Every POST of this item carried the attempt's key, and the identical body (else a replay is a 409).
      const itemPosts = allPosts(sandbox).filter((request) => request.idempotencyKey === key);
      expect(itemPosts.map((request) => request.status)).toEqual(answers);
    }
    expect(allPosts(sandbox)).toHaveLength(9);
    expect(allPosts(sandbox).some((request) => request.status === 409)).toBe(false);
    expect(sandbox.account().balanceMicros).toBe(10_000_000 - 4 * PRICE);
    await expectMoneyAgrees(sandbox, p, 'faulty');
  });

  it('waits out slots held by other clients of the workspace (429) with the same key, not a new attempt', async () => {
    const other = 'mg_other_client_0000000000';
    const clocked = await startClockedSandbox({
      keys: [
        { key: 'mg_test_key_000000000000', id: 1, workspace: 'ws_test' },
        { key: other, id: 2, workspace: 'ws_test' },
      ],
      workspaces: [{ id: 'ws_test', balance_usd: '10', concurrency_limit: 2 }],
    });
    sandbox = clocked.sandbox;
    // Another client of the workspace fills both slots with long jobs.
    const foreign = new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: other });
    for (const n of [1, 2]) {
      const { data } = await foreign.createVideoJob(
        JSON.stringify({ input: { prompt: `foreign ${n} [[run:60]]`, seconds: 2, definition: '480p' } }),
        `foreign-${n}`,
      );
      expect(data.status).toBe('queued');
    }
    expect(sandbox.account().active).toBe(2);
    const p = project(
      'crowded',
      `${manifestYaml('crowded')}items:\n  - {id: a, prompt: first}\n  - {id: b, prompt: second}\n`,
    );
    const child = spawnRun(sandbox, p, ['--json']);
    // Both submissions are turned away, and retried, while the foreign jobs run...
    await waitUntil(
      () => allPosts(sandbox).filter((request) => request.status === 429).length >= 4,
      20_000,
      'repeated 429s',
    ).catch((error: unknown) => {
      child.child.kill('SIGKILL');
      throw error;
    });
    expect(sandbox.records().jobs).toHaveLength(2);
    // ...until the foreign jobs end.
    clocked.advance(61);
    const run = await child.done;
    expect(run.code).toBe(0);
    const items = itemsById(run.stdout);
    // A slot frees when the first foreign job ends; none of ours can be accepted before that.
    const firstSlotFree = Math.min(
      ...sandbox
        .records()
        .jobs.filter((job) => job.apiKeyId === 2)
        .map((job) => Date.parse(job.completedAt!)),
    );
    for (const itemId of ['a', 'b']) {
      expect(items.get(itemId)).toMatchObject({ state: 'done', attempts: 1 });
      const rows = attemptRows(p).filter((row) => row.item_id === itemId);
      expect(rows).toHaveLength(1);
      const posts = postsWithKeys(sandbox, [rows[0]!.idempotency_key]);
      expect(posts.length).toBeGreaterThan(1);
      expect(posts.slice(0, -1).every((request) => request.status === 429)).toBe(true);
      expect(posts.at(-1)!.status).toBe(202);
      expect(posts.at(-1)!.at).toBeGreaterThanOrEqual(firstSlotFree);
      expect(jobsOfItem(sandbox, 'crowded', itemId)).toHaveLength(1);
    }
    // Every POST of the run belongs to one of the two attempts.
    const keys = attemptRows(p).map((row) => row.idempotency_key);
    expect(postsWithKeys(sandbox, keys)).toHaveLength(allPosts(sandbox).length - 2);
    await expectMoneyAgrees(sandbox, p, 'crowded');
  });

  it('fails an item on a 400 (unknown model, max_cost_exceeded) without retrying or charging', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'refused',
      `${manifestYaml('refused')}items:
  - {id: wrong-model, prompt: first, model: no-such-model}
  - {id: too-cheap, prompt: second, max_cost_usd: "0.01"}
  - {id: fine, prompt: third}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const items = itemsById(run.stdout);
    expect(items.get('wrong-model')).toMatchObject({
      state: 'failed',
      attempts: 1,
      job_id: null,
      error: { code: 'invalid_parameter' },
    });
    expect(items.get('too-cheap')).toMatchObject({
      state: 'failed',
      attempts: 1,
      job_id: null,
      cost_usd: '0.000000',
      error: { code: 'max_cost_exceeded' },
    });
    expect(items.get('fine')).toMatchObject({ state: 'done' });
    const rows = attemptRows(p);
    for (const itemId of ['wrong-model', 'too-cheap']) {
      const attempt = rows.filter((row) => row.item_id === itemId);
      expect(attempt).toHaveLength(1);
      expect(attempt[0]).toMatchObject({ state: 'rejected', http_status: 400, amount_micros: 0 });
      expect(postsWithKeys(sandbox, [attempt[0]!.idempotency_key]).map((r) => r.status)).toEqual([400]);
      expect(jobsOfItem(sandbox, 'refused', itemId)).toHaveLength(0);
    }
    expect(JSON.parse(rows.find((row) => row.item_id === 'too-cheap')!.request_body).max_cost_usd).toBe(
      '0.010000',
    );
    await expectMoneyAgrees(sandbox, p, 'refused');

    await expectRerunSendsNothing(sandbox, p, 1, ['--json']);
  });

  it('fails an item loudly on a 409 and never tries it under a new key', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'conflict',
      `${manifestYaml('conflict')}items:\n  - {id: a, prompt: first}\n  - {id: b, prompt: second}\n`,
    );
    // Someone already used this key for another request: the attempt the ledger holds will conflict.
    const reused = 'mb_reused-key-0001';
    const client = new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey });
    await client.createVideoJob(
      JSON.stringify({ input: { prompt: 'something else', seconds: 2, definition: '480p' } }),
      reused,
    );
    const loaded = loadManifest(p.manifest);
    if (!loaded.ok) throw new Error('manifest should load');
    const item = loaded.manifest.items.find((candidate) => candidate.id === 'b')!;
    const ledger = await openLedger(
      { kind: 'sqlite', path: p.ledger, shown: p.ledger },
      'conflict',
      p.manifest,
    );
    await ledger.prepareAttempt({
      itemId: 'b',
      seq: 1,
      idempotencyKey: reused,
      requestBody: buildRequestBody('conflict', item, 1, null),
      requestHash: requestHash(item),
      reservedMicros: 0,
    });
    await ledger.close();

    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/error: b: .*idempotency key was used for a different request/);
    expect(run.stdout).toContain('idempotency_key_reused');
    const status = await statusJson(p);
    const b = status.items.find((entry) => entry.id === 'b')!;
    expect(b).toMatchObject({ state: 'failed', attempts: 1, error: { code: 'idempotency_key_reused' } });
    expect(status.items.find((entry) => entry.id === 'a')).toMatchObject({ state: 'done' });
    expect(attemptRows(p).filter((row) => row.item_id === 'b')).toHaveLength(1);
    expect(postsWithKeys(sandbox, [reused]).map((request) => request.status)).toEqual([202, 409]);
    expect(jobsOfItem(sandbox, 'conflict', 'b')).toHaveLength(0);
    expect(allPosts(sandbox).filter((request) => request.status === 202)).toHaveLength(2);

    // A re-run leaves it failed: no POST at all.
    await expectRerunSendsNothing(sandbox, p, 1, ['--json']);
    await expectMoneyAgrees(sandbox, p, 'conflict');
  });
});
