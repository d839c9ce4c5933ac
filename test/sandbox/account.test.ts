import { describe, expect, it } from 'vitest';
import { body, expectApiError, expectEnvelope, newKey, ROOMY, raw, rawPost, setup } from './helpers.js';

const limited = (limit: number, balance = '10') => ({
  workspaces: [{ id: 'ws_demo', balance_usd: balance, wallet_enabled: true, concurrency_limit: limit }],
});

describe('sandbox: account, wallet, concurrency and prices', () => {
  it('GET /account reports balance with six decimals, wallet state and concurrency', async () => {
    const { sandbox, client } = await setup(limited(3, '12.5'));
    const before = await client.getAccount();
    expect(before.data).toEqual({
      object: 'account',
      balance: { amount_usd: '12.500000', enabled: true },
      concurrency: { active: 0, limit: 3 },
    });
    await client.createVideoJob(body('x'), newKey());
    const after = await client.getAccount();
    expect(after.data.balance.amount_usd).toBe('12.250000');
    expect(after.data.concurrency).toEqual({ active: 1, limit: 3 });
    expect(sandbox.account()).toEqual({ balanceMicros: 12_250_000, enabled: true, active: 1, limit: 3 });
    expect(after.requestId).toMatch(/^req_/);
  });

  it('defaults to a concurrency limit of 3', async () => {
    const { client } = await setup({ workspaces: [{ id: 'ws_demo', balance_usd: '10' }] });
    expect((await client.getAccount()).data.concurrency.limit).toBe(3);
  });

  it('429 concurrency_limited with Retry-After at the limit; no job, no charge', async () => {
    const { sandbox, client, clock } = await setup(limited(2));
    await client.createVideoJob(body('a'), newKey());
    await client.createVideoJob(body('b'), newKey());
    const response = await rawPost(sandbox, body('c'));
    expectEnvelope(response, 429, 'rate_limit_error', 'concurrency_limited');
    expect(response.headers['retry-after']).toBe('10');
    const error = await expectApiError(
      client.createVideoJob(body('c'), newKey()),
      429,
      'concurrency_limited',
    );
    expect(error.retryAfter).toBe(10);
    expect(sandbox.records().jobs).toHaveLength(2);
    expect(sandbox.account().balanceMicros).toBe(9_500_000);
    clock.advance(3);
    expect((await client.createVideoJob(body('c'), newKey())).data.status).toBe('queued');
  });

  it('counts only unfinished jobs; already-failed jobs never take a slot', async () => {
    const { client } = await setup(limited(1));
    const rejected = await client.createVideoJob(body('x [[reject:model_busy]]'), newKey());
    expect(rejected.data.status).toBe('failed');
    expect((await client.createVideoJob(body('y'), newKey())).data.status).toBe('queued');
  });

  it('a balance exactly equal to the cost is enough; one micro-dollar less is not', async () => {
    const { sandbox, client } = await setup(limited(5, '0.250001'));
    await client.createVideoJob(body('x'), newKey());
    expect(sandbox.account().balanceMicros).toBe(1);
    sandbox.update(limited(5, '0.249999'));
    await expectApiError(client.createVideoJob(body('y'), newKey()), 402, 'insufficient_balance');
    sandbox.update(limited(5, '0.25'));
    await client.createVideoJob(body('z'), newKey());
    expect(sandbox.account().balanceMicros).toBe(0);
    await expectApiError(
      client.createVideoJob(body('free [[cost:0]]'), newKey()),
      402,
      'insufficient_balance',
    );
  });

  it('refunds make the balance usable again', async () => {
    const { sandbox, client, clock } = await setup(limited(5, '0.25'));
    await client.createVideoJob(body('x [[fail:processing_failed]]'), newKey());
    await expectApiError(client.createVideoJob(body('y'), newKey()), 402, 'insufficient_balance');
    clock.advance(3);
    expect(sandbox.account().balanceMicros).toBe(250_000);
    expect((await client.createVideoJob(body('y'), newKey())).status).toBe(202);
  });

  it('update() can disable the wallet at run time', async () => {
    const { sandbox, client } = await setup();
    await client.createVideoJob(body('x'), newKey());
    sandbox.update({ workspaces: [{ id: 'ws_demo', balance_usd: '100', wallet_enabled: false }] });
    await expectApiError(client.createVideoJob(body('y'), newKey()), 402, 'wallet_not_enabled');
    expect((await client.getAccount()).data.balance).toEqual({ amount_usd: '99.750000', enabled: false });
  });

  it('prices a job as per-second price of the definition times seconds, with defaults', async () => {
    const { client } = await setup({
      ...ROOMY,
      prices: { per_second_usd: { '480p': '0.02', '720p': '0.05', '1080p': '0.123457' } },
    });
    const cost = async (input: Record<string, unknown>) =>
      (await client.createVideoJob(body('x', {}, input), newKey())).data.cost.amount_usd;
    expect(await cost({})).toBe('0.250000');
    expect(await cost({ seconds: 8 })).toBe('0.400000');
    expect(await cost({ definition: '480p', seconds: 1 })).toBe('0.020000');
    expect(await cost({ definition: '1080p', seconds: 3 })).toBe('0.370371');
    expect(await cost({ prompt: 'x [[cost:1.5]]' })).toBe('1.500000');
  });

  it('uses the first model by default and echoes input, model and metadata unchanged', async () => {
    const { client } = await setup({ models: ['m-one', 'm-two'] });
    const plain = await client.createVideoJob(body('x'), newKey());
    expect(plain.data.model).toBe('m-one');
    const input = {
      prompt: 'x',
      seconds: 3,
      definition: '1080p',
      orientation: '9:16',
      extra: { nested: [1] },
    };
    const metadata = { 'mediabatch.item': 'a', n: 1, deep: { list: [true, null] } };
    const full = await client.createVideoJob(JSON.stringify({ model: 'm-two', input, metadata }), newKey());
    expect(full.data).toMatchObject({ model: 'm-two', input, metadata });
  });

  it('GET /account needs a valid key like everything else', async () => {
    const { sandbox } = await setup();
    const response = await raw(sandbox, 'GET', '/account', { auth: false });
    expectEnvelope(response, 401, 'authentication_error', 'invalid_api_key');
  });
});
