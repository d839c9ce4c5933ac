import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { type FakeClock, ROOMY, setup } from './helpers.js';

/**
 * The sandbox judged by the interface's own words, with plain fetch and literal expectations: no
 * schema of the runner's client takes part, so a wire mistake both sides share would show here.
 */

const JOB_KEYS = [
  'capability',
  'completed_at',
  'cost',
  'created_at',
  'error',
  'expires_at',
  'id',
  'input',
  'metadata',
  'model',
  'object',
  'output',
  'status',
];
const SIX_DECIMALS = /^\d+\.\d{6}$/;
const MILLIS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(
  sandbox: SandboxHandle,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await fetch(`${sandbox.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${sandbox.apiKey}`, ...options.headers },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

let keyCount = 0;
function post(sandbox: SandboxHandle, prompt: string, extra: Record<string, unknown> = {}) {
  return call(sandbox, 'POST', '/videos/generation', {
    body: JSON.stringify({ input: { prompt }, ...extra }),
    headers: { 'content-type': 'application/json', 'idempotency-key': `wire-${++keyCount}` },
  });
}

const keysOf = (value: unknown) => Object.keys(value as object).sort();

function expectJobShape(job: Record<string, unknown>): void {
  expect(keysOf(job)).toEqual(JOB_KEYS);
  expect(job.object).toBe('job');
  expect(job.capability).toBe('video.generation');
  expect(job.id).toMatch(/^job_/);
  expect(keysOf(job.output)).toEqual(['files']);
  expect(keysOf(job.cost)).toEqual(['amount_usd', 'refunded_usd']);
  const cost = job.cost as Record<string, string>;
  expect(cost.amount_usd).toMatch(SIX_DECIMALS);
  expect(cost.refunded_usd).toMatch(SIX_DECIMALS);
  expect(job.created_at).toMatch(MILLIS_UTC);
}

/** Every error answer: the envelope's exact properties, its row of the table, X-Request-Id = request_id. */
function expectError(answer: Answer, status: number, type: string, code: string, param?: string): void {
  expect(answer.status).toBe(status);
  expect(keysOf(answer.body)).toEqual(['error']);
  const error = answer.body.error as Record<string, unknown>;
  expect(keysOf(error)).toEqual(
    param === undefined
      ? ['code', 'message', 'request_id', 'type']
      : ['code', 'message', 'param', 'request_id', 'type'],
  );
  expect(error).toMatchObject({ type, code, ...(param === undefined ? {} : { param }) });
  expect(typeof error.message).toBe('string');
  expect(error.request_id).toBe(answer.headers.get('x-request-id'));
}

async function finishedJob(sandbox: SandboxHandle, clock: FakeClock, prompt: string) {
  const accepted = await post(sandbox, prompt);
  clock.advance(3);
  return call(sandbox, 'GET', `/jobs/${accepted.body.id as string}`);
}

describe('sandbox on the wire: resources', () => {
  it('POST answers 202 with a queued job of exactly the listed properties and six-decimal money', async () => {
    const { sandbox } = await setup();
    const answer = await post(sandbox, 'a harbour', { metadata: { mine: 'kept' } });
    expect(answer.status).toBe(202);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
    expectJobShape(answer.body);
    expect(answer.body).toMatchObject({
      status: 'queued',
      output: { files: [] },
      cost: { amount_usd: '0.250000', refunded_usd: '0.000000' },
      error: null,
      metadata: { mine: 'kept' },
      completed_at: null,
      expires_at: null,
    });
  });

  it('GET /jobs/{id} carries Retry-After while queued or running, and none once final', async () => {
    const { sandbox, clock } = await setup();
    const accepted = await post(sandbox, 'a river');
    const path = `/jobs/${accepted.body.id as string}`;
    const queued = await call(sandbox, 'GET', path);
    expect([queued.status, queued.body.status, queued.headers.get('retry-after')]).toEqual([
      200,
      'queued',
      '10',
    ]);
    clock.advance(1.5);
    const running = await call(sandbox, 'GET', path);
    expect([running.body.status, running.headers.get('retry-after')]).toEqual(['running', '10']);
    clock.advance(2);
    const done = await call(sandbox, 'GET', path);
    expect([done.status, done.body.status, done.headers.get('retry-after')]).toEqual([
      200,
      'succeeded',
      null,
    ]);
    expect(done.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('a succeeded job: one file of type and url only, expires_at exactly 48 hours after completed_at', async () => {
    const { sandbox, clock } = await setup();
    const done = await finishedJob(sandbox, clock, 'a field');
    expectJobShape(done.body);
    const files = (done.body.output as { files: unknown[] }).files;
    expect(files).toHaveLength(1);
    expect(keysOf(files[0])).toEqual(['type', 'url']);
    expect(done.body.completed_at).toMatch(MILLIS_UTC);
    expect(done.body.expires_at).toMatch(MILLIS_UTC);
    const completed = Date.parse(done.body.completed_at as string);
    expect(Date.parse(done.body.expires_at as string) - completed).toBe(48 * 3600 * 1000);
    expect(done.body.cost).toEqual({ amount_usd: '0.250000', refunded_usd: '0.000000' });
  });

  it('a failed job: error of code and message only, the whole charge refunded, no files', async () => {
    const { sandbox, clock } = await setup();
    const failed = await finishedJob(sandbox, clock, 'busy [[fail:model_busy]]');
    expectJobShape(failed.body);
    expect(failed.body.status).toBe('failed');
    expect(keysOf(failed.body.error)).toEqual(['code', 'message']);
    expect((failed.body.error as { code: string }).code).toBe('model_busy');
    expect(failed.body.cost).toEqual({ amount_usd: '0.250000', refunded_usd: '0.250000' });
    expect(failed.body.output).toEqual({ files: [] });
  });

  it('GET /jobs answers a list of exactly object, data, has_more and next_cursor', async () => {
    const { sandbox } = await setup();
    for (const prompt of ['one', 'two', 'three']) await post(sandbox, prompt);
    const page = await call(sandbox, 'GET', '/jobs?status=queued,running&limit=2');
    expect(page.status).toBe(200);
    expect(page.headers.get('x-request-id')).toMatch(/^req_/);
    expect(keysOf(page.body)).toEqual(['data', 'has_more', 'next_cursor', 'object']);
    expect(page.body.object).toBe('list');
    expect(page.body.has_more).toBe(true);
    expect(typeof page.body.next_cursor).toBe('string');
    for (const job of page.body.data as Array<Record<string, unknown>>) expectJobShape(job);
    const last = await call(sandbox, 'GET', `/jobs?limit=2&cursor=${page.body.next_cursor as string}`);
    expect([last.body.has_more, last.body.next_cursor, (last.body.data as unknown[]).length]).toEqual([
      false,
      null,
      1,
    ]);
  });

  it('GET /account answers exactly balance {amount_usd, enabled} and concurrency {active, limit}', async () => {
    const { sandbox } = await setup(ROOMY);
    await post(sandbox, 'one');
    const account = await call(sandbox, 'GET', '/account');
    expect(account.status).toBe(200);
    expect(account.headers.get('x-request-id')).toMatch(/^req_/);
    expect(account.body).toStrictEqual({
      object: 'account',
      balance: { amount_usd: '999.750000', enabled: true },
      concurrency: { active: 1, limit: 1000 },
    });
  });
});

describe('sandbox on the wire: errors', () => {
  it('answers each row of the error table with its status, type, code and param', async () => {
    const { sandbox } = await setup({
      workspaces: [{ id: 'ws_demo', balance_usd: '10', wallet_enabled: true, concurrency_limit: 1 }],
    });
    const json = { 'content-type': 'application/json' };
    expectError(
      await call(sandbox, 'POST', '/videos/generation', {
        body: '{',
        headers: { ...json, 'idempotency-key': 'k1' },
      }),
      400,
      'invalid_request',
      'invalid_request',
    );
    expectError(
      await call(sandbox, 'POST', '/videos/generation', { body: '{"input":{}}', headers: json }),
      400,
      'invalid_request',
      'missing_parameter',
      'Idempotency-Key',
    );
    expectError(
      await post(sandbox, 'x', { max_cost_usd: '0.010000' }),
      400,
      'invalid_request',
      'max_cost_exceeded',
      'max_cost_usd',
    );
    const first = await post(sandbox, 'first');
    expect(first.status).toBe(202);
    const limited = await post(sandbox, 'second');
    expectError(limited, 429, 'rate_limit_error', 'concurrency_limited');
    expect(limited.headers.get('retry-after')).toBe('10');
    const reused = await call(sandbox, 'POST', '/videos/generation', {
      body: JSON.stringify({ input: { prompt: 'other' } }),
      headers: { ...json, 'idempotency-key': `wire-${keyCount - 1}` },
    });
    expectError(reused, 409, 'conflict', 'idempotency_key_reused', 'Idempotency-Key');
    expectError(await call(sandbox, 'GET', '/jobs/job_nope'), 404, 'not_found', 'job_not_found');
    expectError(
      await call(sandbox, 'GET', '/account', { headers: { authorization: 'Bearer mg_unknown_key_000' } }),
      401,
      'authentication_error',
      'invalid_api_key',
    );
    expectError(await post(sandbox, 'boom [[500-beforex1]]'), 500, 'api_error', 'internal_error');
  });

  it('refuses a wallet that cannot pay with 402, and one not enabled with 402 wallet_not_enabled', async () => {
    const { sandbox } = await setup({
      workspaces: [{ id: 'ws_demo', balance_usd: '0.10', wallet_enabled: true, concurrency_limit: 5 }],
    });
    expectError(await post(sandbox, 'too dear'), 402, 'billing_error', 'insufficient_balance');
    sandbox.update({
      workspaces: [{ id: 'ws_demo', balance_usd: '10', wallet_enabled: false, concurrency_limit: 5 }],
    });
    expectError(await post(sandbox, 'off'), 402, 'billing_error', 'wallet_not_enabled');
  });
});
