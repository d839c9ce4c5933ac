import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ApiConnectionError } from '../../src/errors.js';
import { body, newKey, setup } from './helpers.js';

describe('sandbox: outages with stopListening/resumeListening', () => {
  it('refuses connections while stopped and resumes on the same port with all state', async () => {
    const { sandbox, client, clock } = await setup();
    const key = newKey();
    const job = await client.createVideoJob(body('before the outage'), key);
    await sandbox.stopListening();
    await sandbox.stopListening();
    await expect(client.getAccount()).rejects.toBeInstanceOf(ApiConnectionError);
    await expect(client.createVideoJob(body('during'), newKey())).rejects.toBeInstanceOf(ApiConnectionError);
    clock.advance(3);
    await sandbox.resumeListening();
    expect(sandbox.baseUrl).toBe(`http://127.0.0.1:${sandbox.port}/v1`);
    const after = await client.getJob(job.data.id);
    expect(after.data.status).toBe('succeeded');
    expect((await client.createVideoJob(body('before the outage'), key)).data.id).toBe(job.data.id);
    expect(sandbox.records().jobs).toHaveLength(1);
    expect(sandbox.account().balanceMicros).toBe(99_750_000);
    const url = after.data.output.files[0]?.url ?? '';
    expect((await request(url)).statusCode).toBe(200);
  });

  it('severs connections that are open when it stops, mid-download included', async () => {
    const { sandbox, client, clock } = await setup({ faults: { download_bytes_per_second: 2_000 } });
    const job = await client.createVideoJob(body('slow download'), newKey());
    clock.advance(3);
    const url = (await client.getJob(job.data.id)).data.output.files[0]?.url ?? '';
    const response = await request(url);
    expect(response.statusCode).toBe(200);
    const reading = response.body.arrayBuffer();
    await sandbox.stopListening();
    await expect(reading).rejects.toThrow();
    await sandbox.resumeListening();
    expect((await client.getAccount()).status).toBe(200);
  });
});
