import { describe, expect, it } from 'vitest';
import { ApiConnectionError } from '../../src/errors.js';
import { body, clientFor, expectApiError, expectEnvelope, newKey, rawPost, setup } from './helpers.js';

describe('sandbox: idempotency', () => {
  it('replays the same job with 202 and its current state, charging once', async () => {
    const { sandbox, client, clock } = await setup();
    const key = newKey();
    const first = await client.createVideoJob(body('a fox'), key);
    expect(first.status).toBe(202);
    expect(first.data.status).toBe('queued');
    clock.advance(1.5);
    const again = await client.createVideoJob(body('a fox'), key);
    expect(again.status).toBe(202);
    expect(again.data.id).toBe(first.data.id);
    expect(again.data.status).toBe('running');
    expect(sandbox.records().jobs).toHaveLength(1);
    expect(sandbox.account().balanceMicros).toBe(100_000_000 - 250_000);
  });

  it('compares canonical bodies: key order and whitespace do not matter', async () => {
    const { sandbox } = await setup();
    const key = newKey();
    const first = await rawPost(sandbox, '{"input":{"prompt":"p","seconds":3},"metadata":{"a":1,"b":2}}', {
      'idempotency-key': key,
    });
    const second = await rawPost(
      sandbox,
      '{ "metadata": {"b": 2, "a": 1}, "input": {"seconds": 3, "prompt": "p"} }',
      {
        'idempotency-key': key,
      },
    );
    expect(second.status).toBe(202);
    expect((second.json as { id: string }).id).toBe((first.json as { id: string }).id);
  });

  it('409 idempotency_key_reused for the same key with a different body', async () => {
    const { sandbox } = await setup();
    const key = newKey();
    expect((await rawPost(sandbox, body('one'), { 'idempotency-key': key })).status).toBe(202);
    const reused = await rawPost(sandbox, body('two'), { 'idempotency-key': key });
    expectEnvelope(reused, 409, 'conflict', 'idempotency_key_reused', 'Idempotency-Key');
    expect(sandbox.records().jobs).toHaveLength(1);
  });

  it('a new key makes a new job even for an identical body', async () => {
    const { sandbox, client } = await setup();
    const a = await client.createVideoJob(body('same'), newKey());
    const b = await client.createVideoJob(body('same'), newKey());
    expect(a.data.id).not.toBe(b.data.id);
    expect(sandbox.records().jobs).toHaveLength(2);
  });

  it('accepts keys of exactly 255 characters and rejects 256', async () => {
    const { sandbox } = await setup();
    expect((await rawPost(sandbox, body('x'), { 'idempotency-key': 'k'.repeat(255) })).status).toBe(202);
    const tooLong = await rawPost(sandbox, body('x'), { 'idempotency-key': 'k'.repeat(256) });
    expectEnvelope(tooLong, 400, 'invalid_request', 'invalid_parameter', 'Idempotency-Key');
  });

  it('after a 500 once the job is stored, the retry returns the SAME job, charged once', async () => {
    const { sandbox, client } = await setup();
    const key = newKey();
    const text = body('storm [[500-afterx1]]');
    await expectApiError(client.createVideoJob(text, key), 500, 'internal_error');
    const stored = sandbox.records().jobs;
    expect(stored).toHaveLength(1);
    expect(sandbox.account().balanceMicros).toBe(100_000_000 - 250_000);
    const retry = await client.createVideoJob(text, key);
    expect(retry.status).toBe(202);
    expect(retry.data.id).toBe(stored[0]?.id);
    expect(sandbox.records().jobs).toHaveLength(1);
    expect(sandbox.account().balanceMicros).toBe(100_000_000 - 250_000);
  });

  it('after a 500 before storing, the retry creates the one and only job', async () => {
    const { sandbox, client } = await setup();
    const key = newKey();
    const text = body('storm [[500-beforex1]]');
    await expectApiError(client.createVideoJob(text, key), 500, 'internal_error');
    expect(sandbox.records().jobs).toHaveLength(0);
    const retry = await client.createVideoJob(text, key);
    expect(retry.data.status).toBe('queued');
    expect((await client.createVideoJob(text, key)).data.id).toBe(retry.data.id);
    expect(sandbox.records().jobs).toHaveLength(1);
  });

  it('after a dropped connection with the job stored, the retry returns that job', async () => {
    const { sandbox, client } = await setup();
    const key = newKey();
    const text = body('tunnel [[drop-afterx1]]');
    await expect(client.createVideoJob(text, key)).rejects.toBeInstanceOf(ApiConnectionError);
    const [stored] = sandbox.records().jobs;
    expect((await client.createVideoJob(text, key)).data.id).toBe(stored?.id);
    expect(sandbox.records().jobs).toHaveLength(1);
  });

  it('replays even when the workspace is at its limit or out of balance', async () => {
    const { sandbox, client } = await setup({
      workspaces: [{ id: 'ws_demo', balance_usd: '0.25', wallet_enabled: true, concurrency_limit: 1 }],
    });
    const key = newKey();
    const first = await client.createVideoJob(body('only one'), key);
    expect(sandbox.account()).toMatchObject({ balanceMicros: 0, active: 1, limit: 1 });
    const replay = await client.createVideoJob(body('only one'), key);
    expect(replay.data.id).toBe(first.data.id);
    sandbox.update({
      workspaces: [{ id: 'ws_demo', balance_usd: '5', wallet_enabled: true, concurrency_limit: 1 }],
    });
    await expectApiError(client.createVideoJob(body('second'), newKey()), 429, 'concurrency_limited');
  });

  it('after a 429 the same key and body go through once a slot is free', async () => {
    const { sandbox, client, clock } = await setup({
      workspaces: [{ id: 'ws_demo', balance_usd: '5', wallet_enabled: true, concurrency_limit: 1 }],
    });
    await client.createVideoJob(body('first'), newKey());
    const key = newKey();
    await expectApiError(client.createVideoJob(body('second'), key), 429, 'concurrency_limited');
    clock.advance(3);
    const accepted = await client.createVideoJob(body('second'), key);
    expect(accepted.data.status).toBe('queued');
    expect(sandbox.records().jobs).toHaveLength(2);
  });

  it('a failed job replays as failed under its key; resubmission needs a new key', async () => {
    const { sandbox, client } = await setup();
    const key = newKey();
    const text = body('nope [[reject:content_rejected]]');
    const failed = await client.createVideoJob(text, key);
    expect(failed.data.status).toBe('failed');
    expect((await client.createVideoJob(text, key)).data.id).toBe(failed.data.id);
    const fresh = await client.createVideoJob(text, newKey());
    expect(fresh.data.id).not.toBe(failed.data.id);
    expect(sandbox.records().jobs).toHaveLength(2);
  });

  it('keys are scoped to the workspace', async () => {
    const { sandbox, client } = await setup({
      keys: [
        { key: 'mg_test_alpha_000001', id: 1, workspace: 'ws_a' },
        { key: 'mg_test_bravo_000002', id: 2, workspace: 'ws_b' },
      ],
      workspaces: [
        { id: 'ws_a', balance_usd: '1', wallet_enabled: true, concurrency_limit: 3 },
        { id: 'ws_b', balance_usd: '1', wallet_enabled: true, concurrency_limit: 3 },
      ],
    });
    const key = newKey();
    const a = await client.createVideoJob(body('same'), key);
    const b = await clientFor(sandbox, 'mg_test_bravo_000002').createVideoJob(body('different'), key);
    expect(b.data.id).not.toBe(a.data.id);
    expect(sandbox.records().jobs.map((job) => job.workspaceId)).toEqual(['ws_a', 'ws_b']);
  });

  it('forgets a key after idempotency_ttl_seconds (the runner must not resend blindly)', async () => {
    const { sandbox, client, clock } = await setup({ idempotency_ttl_seconds: 3600 });
    const key = newKey();
    const first = await client.createVideoJob(body('late'), key);
    clock.advance(3599);
    expect((await client.createVideoJob(body('late'), key)).data.id).toBe(first.data.id);
    clock.advance(1);
    const second = await client.createVideoJob(body('late'), key);
    expect(second.data.id).not.toBe(first.data.id);
    expect(sandbox.records().jobs).toHaveLength(2);
  });
});
