import { describe, expect, it } from 'vitest';
import { body, expectEnvelope, newKey, raw, rawPost, setup } from './helpers.js';

const WORKSPACES = {
  keys: [
    { key: 'mg_test_alpha_000001', id: 1, workspace: 'ws_a' },
    { key: 'mg_test_revoked_0002', id: 2, workspace: 'ws_a', revoked: true },
    { key: 'mg_test_bravo_000003', id: 3, workspace: 'ws_b' },
  ],
  workspaces: [
    { id: 'ws_a', balance_usd: '10.00', wallet_enabled: true, concurrency_limit: 3 },
    { id: 'ws_b', balance_usd: '10.00', wallet_enabled: true, concurrency_limit: 3 },
  ],
};

describe('sandbox: HTTP error table', () => {
  it('400 invalid_request for a body that is not JSON or not an object', async () => {
    const { sandbox } = await setup();
    expectEnvelope(await rawPost(sandbox, '{"input": {'), 400, 'invalid_request', 'invalid_request');
    expectEnvelope(await rawPost(sandbox, '[1,2]'), 400, 'invalid_request', 'invalid_request');
    expectEnvelope(await rawPost(sandbox, ''), 400, 'invalid_request', 'invalid_request');
    expect(sandbox.records().jobs).toHaveLength(0);
  });

  it('400 missing_parameter names the absent header or field', async () => {
    const { sandbox } = await setup();
    const noKey = await rawPost(sandbox, body('a cat'), { 'idempotency-key': undefined });
    expectEnvelope(noKey, 400, 'invalid_request', 'missing_parameter', 'Idempotency-Key');
    const noType = await rawPost(sandbox, body('a cat'), { 'content-type': undefined });
    expectEnvelope(noType, 400, 'invalid_request', 'missing_parameter', 'Content-Type');
    const noInput = await rawPost(sandbox, JSON.stringify({ model: 'acme-video-2' }));
    expectEnvelope(noInput, 400, 'invalid_request', 'missing_parameter', 'input');
  });

  it('400 invalid_parameter with param input.prompt for a missing or empty prompt', async () => {
    const { sandbox } = await setup();
    for (const input of [{}, { prompt: '' }, { prompt: 42 }]) {
      const response = await rawPost(sandbox, JSON.stringify({ input }));
      expectEnvelope(response, 400, 'invalid_request', 'invalid_parameter', 'input.prompt');
    }
  });

  it('400 invalid_parameter names each invalid field', async () => {
    const { sandbox } = await setup({
      input: { seconds: { min: 2, max: 10, default: 4 }, unknown_fields: 'reject' },
    });
    const cases: Array<[string, string]> = [
      [body('x', {}, { seconds: 11 }), 'input.seconds'],
      [body('x', {}, { seconds: 1 }), 'input.seconds'],
      [body('x', {}, { seconds: 2.5 }), 'input.seconds'],
      [body('x', {}, { seconds: '4' }), 'input.seconds'],
      [body('x', {}, { definition: '4k' }), 'input.definition'],
      [body('x', {}, { definition: '2160p' }), 'input.definition'],
      [body('x', {}, { orientation: '21:9' }), 'input.orientation'],
      [body('x', {}, { style: 'noir' }), 'input.style'],
      [body('x', { model: 'acme-video-9' }), 'model'],
      [body('x', { model: 7 }), 'model'],
      [body('x', { max_cost_usd: '1.1234567' }), 'max_cost_usd'],
      [body('x', { max_cost_usd: 2 }), 'max_cost_usd'],
      [body('x', { max_cost_usd: '-1' }), 'max_cost_usd'],
      [body('x', { metadata: ['a'] }), 'metadata'],
      [body('x', { priority: 'high' }), 'priority'],
      [JSON.stringify({ input: 'a cat' }), 'input'],
    ];
    for (const [text, param] of cases) {
      expectEnvelope(await rawPost(sandbox, text), 400, 'invalid_request', 'invalid_parameter', param);
    }
    const longKey = await rawPost(sandbox, body('x'), { 'idempotency-key': 'k'.repeat(256) });
    expectEnvelope(longKey, 400, 'invalid_request', 'invalid_parameter', 'Idempotency-Key');
    const badType = await rawPost(sandbox, body('x'), { 'content-type': 'text/plain' });
    expectEnvelope(badType, 400, 'invalid_request', 'invalid_parameter', 'Content-Type');
    expect(sandbox.records().jobs).toHaveLength(0);
  });

  it('accepts extra input fields by default (the real set is not published)', async () => {
    const { sandbox, client } = await setup();
    const job = await client.createVideoJob(body('x', {}, { style: 'noir', seed: 3 }), newKey());
    expect(job.data.input).toEqual({ prompt: 'x', style: 'noir', seed: 3 });
    expect(sandbox.records().jobs).toHaveLength(1);
  });

  it('400 max_cost_exceeded when the price is above max_cost_usd; equal is fine', async () => {
    const { sandbox } = await setup();
    // 720p at 0.05/s for 4 s = 0.20
    const over = await rawPost(sandbox, body('x', { max_cost_usd: '0.199999' }, { seconds: 4 }));
    expectEnvelope(over, 400, 'invalid_request', 'max_cost_exceeded', 'max_cost_usd');
    const equal = await rawPost(sandbox, body('x', { max_cost_usd: '0.2' }, { seconds: 4 }));
    expect(equal.status).toBe(202);
    expect(sandbox.account().balanceMicros).toBe(100_000_000 - 200_000);
  });

  it('401 invalid_api_key for missing, malformed, unknown and revoked keys, on every endpoint', async () => {
    const { sandbox, client } = await setup(WORKSPACES);
    const job = await client.createVideoJob(body('x'), newKey());
    const variants: Array<Record<string, string>> = [
      {},
      { authorization: 'mg_test_alpha_000001' },
      { authorization: 'Basic mg_test_alpha_000001' },
      { authorization: 'Bearer ' },
      { authorization: 'Bearer mg_test_alpha_000001 extra' },
      { authorization: 'Bearer mg_test_unknown_00001' },
      { authorization: 'Bearer mg_test_revoked_0002' },
    ];
    const endpoints: Array<['GET' | 'POST', string]> = [
      ['POST', '/videos/generation'],
      ['GET', `/jobs/${job.data.id}`],
      ['GET', '/jobs'],
      ['GET', '/account'],
    ];
    for (const headers of variants) {
      for (const [method, path] of endpoints) {
        const response = await raw(sandbox, method, path, {
          auth: false,
          headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': newKey() },
          ...(method === 'POST' ? { body: body('x') } : {}),
        });
        expectEnvelope(response, 401, 'authentication_error', 'invalid_api_key');
      }
    }
    expect(sandbox.records().jobs).toHaveLength(1);
  });

  it('402 wallet_not_enabled and insufficient_balance create no job and charge nothing', async () => {
    const { sandbox } = await setup({
      workspaces: [{ id: 'ws_demo', balance_usd: '0.30', wallet_enabled: false, concurrency_limit: 3 }],
    });
    expectEnvelope(await rawPost(sandbox, body('x')), 402, 'billing_error', 'wallet_not_enabled');
    sandbox.update({
      workspaces: [{ id: 'ws_demo', balance_usd: '0.30', wallet_enabled: true, concurrency_limit: 3 }],
    });
    // default 5 s at 720p = 0.25; the second one no longer fits in 0.05
    expect((await rawPost(sandbox, body('x'))).status).toBe(202);
    expectEnvelope(await rawPost(sandbox, body('y')), 402, 'billing_error', 'insufficient_balance');
    expect(sandbox.records().jobs).toHaveLength(1);
    expect(sandbox.account().balanceMicros).toBe(50_000);
  });

  it('404 job_not_found for unknown jobs and for jobs of another workspace', async () => {
    const { sandbox, client } = await setup(WORKSPACES);
    const job = await client.createVideoJob(body('x'), newKey());
    expectEnvelope(await raw(sandbox, 'GET', '/jobs/job_doesnotexist'), 404, 'not_found', 'job_not_found');
    const other = await raw(sandbox, 'GET', `/jobs/${job.data.id}`, {
      auth: false,
      headers: { authorization: 'Bearer mg_test_bravo_000003' },
    });
    expectEnvelope(other, 404, 'not_found', 'job_not_found');
  });

  it('unknown routes and methods answer in the envelope with X-Request-Id', async () => {
    const { sandbox } = await setup();
    expectEnvelope(await raw(sandbox, 'GET', '/nope'), 404, 'not_found', 'route_not_found');
    expectEnvelope(await raw(sandbox, 'GET', '/../v2/jobs'), 404, 'not_found', 'route_not_found');
    expectEnvelope(
      await raw(sandbox, 'GET', '/videos/generation'),
      405,
      'invalid_request',
      'method_not_allowed',
    );
    expectEnvelope(await raw(sandbox, 'DELETE', '/jobs/job_x'), 405, 'invalid_request', 'method_not_allowed');
  });

  it('every response carries a unique X-Request-Id', async () => {
    const { sandbox, client } = await setup();
    const ids = new Set<string | null>();
    const created = await client.createVideoJob(body('x'), newKey());
    ids.add(created.requestId);
    ids.add((await client.getJob(created.data.id)).requestId);
    ids.add((await client.listJobs()).requestId);
    ids.add((await client.getAccount()).requestId);
    ids.add((await raw(sandbox, 'GET', '/nope')).headers['x-request-id'] as string);
    ids.add((await rawPost(sandbox, 'not json')).headers['x-request-id'] as string);
    expect(ids.size).toBe(6);
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
  });
});
