import { describe, expect, it } from 'vitest';
import { body, newKey, raw, setup, T0 } from './helpers.js';

const iso = (ms: number) => new Date(ms).toISOString();
const HOURS_48 = 48 * 3600 * 1000;

describe('sandbox: job lifecycle', () => {
  it('moves queued -> running -> succeeded on the injected clock, with Retry-After only while unfinished', async () => {
    const { sandbox, client, clock } = await setup();
    const created = await client.createVideoJob(body('a lake', { metadata: { shot: '1' } }), newKey());
    const id = created.data.id;
    expect(created.data).toMatchObject({
      object: 'job',
      capability: 'video.generation',
      model: 'acme-video-2',
      status: 'queued',
      input: { prompt: 'a lake' },
      output: { files: [] },
      cost: { amount_usd: '0.250000', refunded_usd: '0.000000' },
      error: null,
      metadata: { shot: '1' },
      created_at: iso(T0),
      completed_at: null,
      expires_at: null,
    });

    const queued = await client.getJob(id);
    expect(queued.data.status).toBe('queued');
    expect(queued.retryAfter).toBe(10);
    clock.advance(1);
    const running = await client.getJob(id);
    expect(running.data.status).toBe('running');
    expect(running.retryAfter).toBe(10);
    expect(sandbox.account().active).toBe(1);

    clock.advance(2);
    const done = await client.getJob(id);
    expect(done.retryAfter).toBeNull();
    expect(done.data).toMatchObject({
      status: 'succeeded',
      completed_at: iso(T0 + 3000),
      expires_at: iso(T0 + 3000 + HOURS_48),
      error: null,
      cost: { amount_usd: '0.250000', refunded_usd: '0.000000' },
    });
    expect(done.data.output.files).toHaveLength(1);
    expect(done.data.output.files[0]?.type).toBe('video');
    expect(sandbox.account()).toMatchObject({ active: 0, balanceMicros: 99_750_000 });
  });

  it('prints a configured fractional Retry-After as a plain number', async () => {
    const { sandbox, client } = await setup({ retry_after_seconds: 0.2 });
    const job = await client.createVideoJob(body('x'), newKey());
    const response = await raw(sandbox, 'GET', `/jobs/${job.data.id}`);
    expect(response.headers['retry-after']).toBe('0.2');
  });

  it('a job that fails later is refunded in full when it fails, not before', async () => {
    const { sandbox, client, clock } = await setup();
    const job = await client.createVideoJob(body('crowd [[fail:provider_unavailable]]'), newKey());
    expect(job.data.status).toBe('queued');
    expect(sandbox.account().balanceMicros).toBe(99_750_000);
    clock.advance(3);
    const failed = await client.getJob(job.data.id);
    expect(failed.retryAfter).toBeNull();
    expect(failed.data).toMatchObject({
      status: 'failed',
      output: { files: [] },
      cost: { amount_usd: '0.250000', refunded_usd: '0.250000' },
      completed_at: iso(T0 + 3000),
      expires_at: iso(T0 + 3000 + HOURS_48),
    });
    expect(failed.data.error?.code).toBe('provider_unavailable');
    expect(failed.data.error?.message.length).toBeGreaterThan(0);
    expect(sandbox.account().balanceMicros).toBe(100_000_000);
    expect(sandbox.records().jobs[0]).toMatchObject({
      status: 'failed',
      amountMicros: 250_000,
      refundedMicros: 250_000,
      errorCode: 'provider_unavailable',
    });
  });

  it('[[no-refund]] leaves a failed job charged, in its cost, the wallet and the records; a success is charged as ever', async () => {
    const { sandbox, client, clock } = await setup();
    const fine = await client.createVideoJob(body('kept [[no-refundx1]]'), newKey());
    const failed = await client.createVideoJob(
      body('kept [[no-refundx1]] [[fail:processing_failed]]'),
      newKey(),
    );
    clock.advance(3);
    expect((await client.getJob(fine.data.id)).data.status).toBe('succeeded');
    expect((await client.getJob(failed.data.id)).data).toMatchObject({
      status: 'failed',
      cost: { amount_usd: '0.250000', refunded_usd: '0.000000' },
    });
    expect(sandbox.account().balanceMicros).toBe(99_500_000);
    expect(sandbox.records().jobs[1]).toMatchObject({ status: 'failed', refundedMicros: 0 });
  });

  it('faults.refund_missing leaves every failed job charged at rate 1', async () => {
    const { sandbox, client, clock } = await setup({
      faults: { job_failures: { processing_failed: 1 }, refund_missing: 1 },
    });
    const job = await client.createVideoJob(body('x'), newKey());
    clock.advance(3);
    expect((await client.getJob(job.data.id)).data.cost.refunded_usd).toBe('0.000000');
    expect(sandbox.account().balanceMicros).toBe(99_750_000);
  });

  it('a canceled job has no error and is refunded', async () => {
    const { sandbox, client, clock } = await setup();
    const job = await client.createVideoJob(body('x [[fail:canceled]]'), newKey());
    clock.advance(3);
    const canceled = await client.getJob(job.data.id);
    expect(canceled.data).toMatchObject({
      status: 'canceled',
      error: null,
      cost: { refunded_usd: '0.250000' },
    });
    expect(sandbox.account().balanceMicros).toBe(100_000_000);
  });

  it('202 with a job already failed at submission, refunded at once and not counted as active', async () => {
    const { sandbox, client } = await setup({ faults: { submit_failures: { model_busy: 1 } } });
    const job = await client.createVideoJob(body('x'), newKey());
    expect(job.status).toBe(202);
    expect(job.data).toMatchObject({
      status: 'failed',
      error: { code: 'model_busy' },
      cost: { amount_usd: '0.250000', refunded_usd: '0.250000' },
      completed_at: iso(T0),
      expires_at: iso(T0 + HOURS_48),
    });
    expect(sandbox.account()).toMatchObject({ balanceMicros: 100_000_000, active: 0 });
    expect((await client.getJob(job.data.id)).retryAfter).toBeNull();
  });

  it('fails with timeout at exactly job_timeout_seconds after creation', async () => {
    const { sandbox, client, clock } = await setup({
      job_timeout_seconds: 10,
      running_seconds: { min: 60, max: 60 },
    });
    const slow = await client.createVideoJob(body('slow'), newKey());
    const stuck = await client.createVideoJob(body('stuck [[fail:timeout]]'), newKey());
    clock.advance(9.999);
    expect((await client.getJob(slow.data.id)).data.status).toBe('running');
    clock.advance(0.001);
    for (const id of [slow.data.id, stuck.data.id]) {
      const job = await client.getJob(id);
      expect(job.data).toMatchObject({
        status: 'failed',
        error: { code: 'timeout' },
        completed_at: iso(T0 + 10_000),
        cost: { refunded_usd: '0.250000' },
      });
    }
    expect(sandbox.account()).toMatchObject({ balanceMicros: 100_000_000, active: 0 });
  });

  it('uses the 30-minute timeout by default', async () => {
    const { client, clock } = await setup();
    const job = await client.createVideoJob(body('never [[fail:timeout]]'), newKey());
    clock.advance(1799);
    expect((await client.getJob(job.data.id)).data.status).toBe('running');
    clock.advance(1);
    expect((await client.getJob(job.data.id)).data.error?.code).toBe('timeout');
  });

  it('[[run:N]] sets the running time of one job', async () => {
    const { client, clock } = await setup();
    const job = await client.createVideoJob(body('long take [[run:30]]'), newKey());
    clock.advance(30);
    expect((await client.getJob(job.data.id)).data.status).toBe('running');
    clock.advance(1);
    expect((await client.getJob(job.data.id)).data.completed_at).toBe(iso(T0 + 31_000));
  });

  it('after retention the files are gone but the job stays retrievable and listed', async () => {
    const { client, clock } = await setup({ retention_seconds: 60 });
    const job = await client.createVideoJob(body('x'), newKey());
    clock.advance(3);
    const done = await client.getJob(job.data.id);
    expect(done.data.expires_at).toBe(iso(T0 + 63_000));
    clock.advance(59.999);
    expect((await client.getJob(job.data.id)).data.output.files).toHaveLength(1);
    clock.advance(0.001);
    const expired = await client.getJob(job.data.id);
    expect(expired.data).toMatchObject({ status: 'succeeded', output: { files: [] } });
    expect(expired.data.expires_at).toBe(done.data.expires_at);
    const listed = await client.listJobs();
    expect(listed.data.data[0]?.output.files).toEqual([]);
  });

  it('frees the concurrency slot when a job finishes', async () => {
    const { sandbox, client, clock } = await setup({
      workspaces: [{ id: 'ws_demo', balance_usd: '5', wallet_enabled: true, concurrency_limit: 2 }],
    });
    await client.createVideoJob(body('a'), newKey());
    await client.createVideoJob(body('b [[run:10]]'), newKey());
    expect((await client.getAccount()).data.concurrency).toEqual({ active: 2, limit: 2 });
    clock.advance(3);
    expect((await client.getAccount()).data.concurrency).toEqual({ active: 1, limit: 2 });
    clock.advance(8);
    expect(sandbox.account().active).toBe(0);
  });
});
