import { createHash } from 'node:crypto';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { MediaGenClient } from '../../src/service-client/index.js';
import { body, expectEnvelope, type FakeClock, newKey, raw, setup } from './helpers.js';

async function succeeded(client: MediaGenClient, clock: FakeClock, prompt = 'a lighthouse') {
  const job = await client.createVideoJob(body(prompt), newKey());
  clock.advance(3);
  const done = await client.getJob(job.data.id);
  const url = done.data.output.files[0]?.url;
  if (!url) throw new Error('no output url');
  return { id: job.data.id, url };
}

async function fetchBytes(url: string) {
  const response = await request(url);
  const bytes = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, headers: response.headers, bytes };
}

describe('sandbox: outputs and signed URLs', () => {
  it('serves a real MP4 (ftyp first), unique per job, matching the recorded sha256', async () => {
    const { sandbox, client, clock } = await setup();
    const a = await succeeded(client, clock, 'first');
    const b = await succeeded(client, clock, 'second');
    const fileA = await fetchBytes(a.url);
    const fileB = await fetchBytes(b.url);
    expect(fileA.status).toBe(200);
    expect(fileA.headers['content-type']).toBe('video/mp4');
    expect(fileA.headers['content-length']).toBe(String(fileA.bytes.length));
    expect(fileA.headers['x-request-id']).toMatch(/^req_/);
    expect(fileA.bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(fileA.bytes.length).toBeLessThan(16_384);
    expect(fileA.bytes.equals(fileB.bytes)).toBe(false);
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const records = sandbox.records();
    expect(records.jobs.map((job) => job.files)).toEqual([
      [{ sha256: sha(fileA.bytes), bytes: fileA.bytes.length, contentType: 'video/mp4' }],
      [{ sha256: sha(fileB.bytes), bytes: fileB.bytes.length, contentType: 'video/mp4' }],
    ]);
    const downloads = records.requests.filter((entry) => entry.path.startsWith('/v1/files/'));
    expect(downloads).toEqual([
      expect.objectContaining({ method: 'GET', status: 200, jobId: a.id, path: `/v1/files/${a.id}/0` }),
      expect.objectContaining({ method: 'GET', status: 200, jobId: b.id }),
    ]);
  });

  it('is a well-formed MP4: top-level boxes tile the file, the last one a free box naming the job', async () => {
    const { client, clock } = await setup();
    const { id, url } = await succeeded(client, clock);
    const { bytes } = await fetchBytes(url);
    const types: string[] = [];
    let offset = 0;
    while (offset < bytes.length) {
      const size = bytes.readUInt32BE(offset);
      expect(size).toBeGreaterThanOrEqual(8);
      types.push(bytes.subarray(offset + 4, offset + 8).toString('latin1'));
      offset += size;
    }
    expect(offset).toBe(bytes.length);
    expect(types.slice(0, 2)).toEqual(['ftyp', 'moov']);
    expect(types).toContain('mdat');
    expect(types.at(-1)).toBe('free');
    expect(bytes.toString('latin1')).toContain(id);
  });

  it('URLs expire after url_lifetime_seconds (403); a later fetch of the job signs a fresh one', async () => {
    const { sandbox, client, clock } = await setup({ url_lifetime_seconds: 60 });
    const { id, url } = await succeeded(client, clock);
    clock.advance(59.999);
    expect((await fetchBytes(url)).status).toBe(200);
    clock.advance(0.001);
    expectEnvelope(await raw(sandbox, 'GET', url, { auth: false }), 403, 'permission_error', 'url_expired');
    const fresh = (await client.getJob(id)).data.output.files[0]?.url ?? '';
    expect(fresh).not.toBe(url);
    expect((await fetchBytes(fresh)).status).toBe(200);
    const listed = (await client.listJobs()).data.data[0]?.output.files[0]?.url ?? '';
    expect((await fetchBytes(listed)).status).toBe(200);
  });

  it('lasts about an hour by default', async () => {
    const { client, clock } = await setup();
    const { url } = await succeeded(client, clock);
    clock.advance(3599);
    expect((await fetchBytes(url)).status).toBe(200);
    clock.advance(1);
    expect((await fetchBytes(url)).status).toBe(403);
  });

  it('rejects tampered signatures, expiries and paths with 403', async () => {
    const { sandbox, client, clock } = await setup();
    const a = await succeeded(client, clock, 'one');
    const b = await succeeded(client, clock, 'two');
    const parsed = new URL(a.url);
    const sig = parsed.searchParams.get('sig') ?? '';
    const expires = Number(parsed.searchParams.get('expires'));
    const variants = [
      a.url.replace(`sig=${sig}`, `sig=${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`),
      a.url.replace(`expires=${expires}`, `expires=${expires + 3_600_000}`),
      a.url.replace(a.id, b.id),
      a.url.split('?')[0] ?? '',
    ];
    for (const url of variants) {
      expectEnvelope(
        await raw(sandbox, 'GET', url, { auth: false }),
        403,
        'permission_error',
        'invalid_signature',
      );
    }
  });

  it('after retention the old URL answers 410 output_expired', async () => {
    const { sandbox, client, clock } = await setup({ retention_seconds: 600 });
    const { url } = await succeeded(client, clock);
    clock.advance(600);
    expectEnvelope(await raw(sandbox, 'GET', url, { auth: false }), 410, 'not_found', 'output_expired');
  });

  it('[[cut-downloadx1]] sends half the body then drops; the next download is whole', async () => {
    const { sandbox, client, clock } = await setup();
    const { url } = await succeeded(client, clock, 'flaky [[cut-downloadx1]]');
    const response = await request(url);
    expect(response.statusCode).toBe(200);
    await expect(response.body.arrayBuffer()).rejects.toThrow();
    const whole = await fetchBytes(url);
    expect(whole.bytes.length).toBe(Number(whole.headers['content-length']));
    expect(sandbox.records().jobs[0]?.files[0]?.bytes).toBe(whole.bytes.length);
  });

  it('download_cut: 1 cuts every download', async () => {
    const { client, clock } = await setup({ faults: { download_cut: 1 } });
    const { url } = await succeeded(client, clock);
    for (let i = 0; i < 2; i++) {
      const response = await request(url);
      await expect(response.body.arrayBuffer()).rejects.toThrow();
    }
  });

  it('throttles downloads to download_bytes_per_second', async () => {
    const { client, clock } = await setup({ faults: { download_bytes_per_second: 8_000 } });
    const { url } = await succeeded(client, clock);
    const started = performance.now();
    const { bytes } = await fetchBytes(url);
    // ~2.2 KB in 800-byte slices every 100 ms
    expect(performance.now() - started).toBeGreaterThanOrEqual(180);
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
  });
});
