import { describe, expect, it } from 'vitest';
import { ApiConnectionError } from '../../src/errors.js';
import type { SandboxConfigInput } from '../../src/sandbox/index.js';
import { body, expectApiError, expectEnvelope, newKey, ROOMY, rawPost, setup } from './helpers.js';

/** Submits the same 40 keyed requests and reports what the sandbox made of each. */
async function outcomes(config: SandboxConfigInput): Promise<string[]> {
  const { client, clock } = await setup({ ...ROOMY, ...config });
  const results: string[] = [];
  for (let i = 0; i < 40; i++) {
    const key = `repro-${i}`;
    try {
      const job = await client.createVideoJob(body(`item ${i}`), key);
      results.push(`${job.data.status}:${job.data.error?.code ?? ''}`);
    } catch (error) {
      results.push(
        error instanceof ApiConnectionError ? 'dropped' : `http:${(error as { code?: string }).code}`,
      );
    }
  }
  clock.advance(60);
  const finals = (await client.listJobs({ limit: 100 })).data.data.map(
    (job) => `${job.status}:${job.error?.code ?? ''}`,
  );
  return [...results, ...finals.reverse()];
}

const NOISY: SandboxConfigInput = {
  faults: {
    job_failures: { model_busy: 0.2, provider_unavailable: 0.1, canceled: 0.1 },
    submit_failures: { content_rejected: 0.1 },
    http500_before_store: 0.1,
    http500_after_store: 0.1,
    drop_before_store: 0.05,
  },
};

describe('sandbox: faults', () => {
  it('reproduces every fault from the seed, and a different seed gives different faults', async () => {
    const first = await outcomes({ ...NOISY, seed: 42 });
    const second = await outcomes({ ...NOISY, seed: 42 });
    const other = await outcomes({ ...NOISY, seed: 43 });
    expect(second).toEqual(first);
    expect(other).not.toEqual(first);
    const kinds = new Set(first.map((entry) => entry.split(':').slice(0, 2).join(':')));
    for (const kind of ['queued:', 'failed:content_rejected', 'http:internal_error', 'failed:model_busy']) {
      expect(kinds).toContain(kind);
    }
  });

  it('job_failures decide the final outcome of accepted jobs', async () => {
    const { client, clock } = await setup({ faults: { job_failures: { processing_failed: 1 } } });
    const job = await client.createVideoJob(body('x'), newKey());
    expect(job.data.status).toBe('queued');
    clock.advance(3);
    expect((await client.getJob(job.data.id)).data.error?.code).toBe('processing_failed');
  });

  it('http500_before_store answers 500 and stores nothing; update() turns it off', async () => {
    const { sandbox, client } = await setup({ faults: { http500_before_store: 1 } });
    const key = newKey();
    expectEnvelope(await rawPost(sandbox, body('x')), 500, 'api_error', 'internal_error');
    await expectApiError(client.createVideoJob(body('x'), key), 500, 'internal_error');
    expect(sandbox.records().jobs).toHaveLength(0);
    expect(sandbox.account().balanceMicros).toBe(100_000_000);
    sandbox.update({ faults: { http500_before_store: 0 } });
    expect((await client.createVideoJob(body('x'), key)).status).toBe(202);
  });

  it('http500_after_store stores and charges the job, then answers 500', async () => {
    const { sandbox, client } = await setup({ faults: { http500_after_store: 1 } });
    await expectApiError(client.createVideoJob(body('x'), newKey()), 500, 'internal_error');
    expect(sandbox.records().jobs).toHaveLength(1);
    expect(sandbox.account().balanceMicros).toBe(99_750_000);
    expect(sandbox.records().requests.map((entry) => entry.status)).toEqual([500]);
  });

  it('drops connections before or after storing; the client sees a connection error', async () => {
    const { sandbox, client } = await setup({ faults: { drop_before_store: 1 } });
    await expect(client.createVideoJob(body('x'), newKey())).rejects.toBeInstanceOf(ApiConnectionError);
    expect(sandbox.records().jobs).toHaveLength(0);
    sandbox.update({ faults: { drop_before_store: 0, drop_after_store: 1 } });
    const key = newKey();
    await expect(client.createVideoJob(body('y'), key)).rejects.toBeInstanceOf(ApiConnectionError);
    const records = sandbox.records();
    expect(records.jobs).toHaveLength(1);
    expect(records.requests.map((entry) => entry.status)).toEqual(['dropped', 'dropped']);
    expect(records.requests[1]).toMatchObject({ idempotencyKey: key, jobId: records.jobs[0]?.id });
  });

  it('[[fail:<code>x2]] fails only the first two jobs with that exact prompt', async () => {
    const { client, clock } = await setup(ROOMY);
    const text = body('busy beach [[fail:model_busyx2]]');
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push((await client.createVideoJob(text, newKey())).data.id);
    const other = await client.createVideoJob(body('busy beach [[fail:model_busyx2]] v2'), newKey());
    clock.advance(3);
    const codes = [];
    for (const id of [...jobs, other.data.id]) codes.push((await client.getJob(id)).data.error?.code ?? 'ok');
    expect(codes).toEqual(['model_busy', 'model_busy', 'ok', 'model_busy']);
  });

  it('[[reject:<code>x1]] rejects the first job at submission only', async () => {
    const { client } = await setup();
    const text = body('[[reject:content_rejectedx1]] a flag');
    const first = await client.createVideoJob(text, newKey());
    const second = await client.createVideoJob(text, newKey());
    expect([first.data.status, second.data.status]).toEqual(['failed', 'queued']);
    expect(first.data.error?.code).toBe('content_rejected');
  });

  it('[[500-beforex2]] and [[drop-beforex1]] count POSTs, so retries with the same key get through', async () => {
    const { sandbox, client } = await setup();
    const key = newKey();
    const text = body('shaky [[500-beforex2]]');
    await expectApiError(client.createVideoJob(text, key), 500, 'internal_error');
    await expectApiError(client.createVideoJob(text, key), 500, 'internal_error');
    expect((await client.createVideoJob(text, key)).status).toBe(202);
    const dropKey = newKey();
    const dropText = body('cable [[drop-beforex1]]');
    await expect(client.createVideoJob(dropText, dropKey)).rejects.toBeInstanceOf(ApiConnectionError);
    expect((await client.createVideoJob(dropText, dropKey)).status).toBe(202);
    expect(sandbox.records().jobs).toHaveLength(2);
  });

  it('markers without a count apply every time', async () => {
    const { client } = await setup();
    for (let i = 0; i < 3; i++) {
      await expectApiError(
        client.createVideoJob(body('down [[500-before]]'), newKey()),
        500,
        'internal_error',
      );
    }
  });

  it('latency_ms delays answers', async () => {
    const { client } = await setup({ faults: { latency_ms: { min: 150, max: 200 } } });
    const started = performance.now();
    await client.getAccount();
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('list_latency_ms delays only lists, which answer as of the end of the delay', async () => {
    const { client } = await setup({ faults: { list_latency_ms: { min: 300, max: 300 } } });
    const started = performance.now();
    await client.getAccount();
    expect(performance.now() - started).toBeLessThan(300);
    // A job submitted while the list waits is on it: the fleet-start test leans on this.
    const listing = client.listJobs({});
    await client.createVideoJob(body('late'), newKey());
    expect((await listing).data.data).toHaveLength(1);
  });

  it('records every request with its outcome, key and job', async () => {
    const { sandbox, client, clock } = await setup();
    const key = newKey();
    const job = await client.createVideoJob(body('x'), key);
    clock.advance(1);
    await client.getJob(job.data.id);
    await client.listJobs({ status: ['queued'] });
    await expectApiError(client.getJob('job_missing'), 404, 'job_not_found');
    expect(sandbox.records().requests).toEqual([
      {
        method: 'POST',
        path: '/v1/videos/generation',
        status: 202,
        idempotencyKey: key,
        jobId: job.data.id,
        at: expect.any(Number),
        keyId: 1,
      },
      {
        method: 'GET',
        path: `/v1/jobs/${job.data.id}`,
        status: 200,
        idempotencyKey: null,
        jobId: job.data.id,
        at: expect.any(Number),
        keyId: 1,
      },
      {
        method: 'GET',
        path: '/v1/jobs',
        status: 200,
        idempotencyKey: null,
        jobId: null,
        at: expect.any(Number),
        keyId: 1,
        query: '?status=queued',
      },
      {
        method: 'GET',
        path: '/v1/jobs/job_missing',
        status: 404,
        idempotencyKey: null,
        jobId: null,
        at: expect.any(Number),
        keyId: 1,
      },
    ]);
    const times = sandbox.records().requests.map((entry) => entry.at);
    expect(times[1]! - times[0]!).toBe(1000);
  });
});
