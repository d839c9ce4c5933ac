import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeRefusal } from '../../../src/runner/stop-rules.js';
import type { Job } from '../../../src/service-client/schemas.js';
import type { OutputStore, SaveJobRequest } from '../../../src/storage/output-store.js';
import { S3Store } from '../../../src/storage/s3-store.js';
import { type S3TestServer, s3TestClient, skipS3Tests, startS3Server } from '../../support/s3-server.js';
import { closedPort } from '../../support/services.js';
import { keysUnder, objectMetadata, objectSha256, unfinishedUploads } from './s3-support.js';

/**
 * The S3 store on its own, against the real server: what a save answers when the bucket refuses,
 * when the endpoint is gone, and when a download lies about its length. A file server on loopback
 * stands in for the service's signed download URLs.
 */
let server: S3TestServer;
let client: S3Client;
let files: Server;
let filesUrl: string;
/** Bodies served at /<name>: the bytes, and the Content-Length announced for them. */
const bodies = new Map<string, { bytes: Buffer; announced: number }>();

describe.skipIf(skipS3Tests)('the S3 store against a real S3 server', () => {
  beforeAll(async () => {
    server = await startS3Server();
    client = s3TestClient(server);
    files = createServer((request, response) => {
      const body = bodies.get((request.url ?? '').slice(1));
      if (!body) return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(body.announced) });
      // A body shorter than announced ends the connection early, as a cut transfer does.
      response.end(body.bytes.subarray(0, Math.min(body.bytes.length, body.announced)));
      if (body.bytes.length < body.announced) response.destroy();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    files?.closeAllConnections();
    await new Promise((resolve) => files?.close(resolve));
    client?.destroy();
    await server?.stop();
  });

  const env = (overrides: Record<string, string> = {}) => ({ ...server.env, ...overrides });

  function request(name: string, bytes: Buffer, announced = bytes.length): SaveJobRequest {
    bodies.set(name, { bytes, announced });
    const job = { id: `job_${name}`, output: { files: [{ url: `${filesUrl}/${name}` }] } } as unknown as Job;
    return {
      job,
      itemId: name,
      name,
      beforePlace: async () => undefined,
      refreshJob: async () => job,
      sidecar: null,
    };
  }

  const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  it('places a whole file under its key with its SHA-256, and leaves no staging object', async () => {
    const bucket = await server.createBucket('store');
    const store: OutputStore = await S3Store.open(`s3://${bucket}/p`, env());
    const bytes = Buffer.from('a whole video\n'.repeat(1000));
    const outcome = await store.saveJob(request('whole', bytes));
    expect(outcome).toEqual({
      kind: 'saved',
      files: [{ idx: 0, path: `s3://${bucket}/p/whole.mp4`, bytes: bytes.length, sha256: sha(bytes) }],
    });
    expect(await objectSha256(client, bucket, 'p/whole.mp4')).toBe(sha(bytes));
    expect((await objectMetadata(client, bucket, 'p/whole.mp4')).sha256).toBe(sha(bytes));
    expect(
      await store.check({ path: `s3://${bucket}/p/whole.mp4`, bytes: bytes.length, sha256: sha(bytes) }),
    ).toBe('intact');
    expect(
      await store.check({
        path: `s3://${bucket}/p/whole.mp4`,
        bytes: bytes.length,
        sha256: sha(Buffer.from('x')),
      }),
    ).toBe('altered');
    expect(
      await store.check({ path: `s3://${bucket}/p/gone.mp4`, bytes: bytes.length, sha256: sha(bytes) }),
    ).toBe('missing');
    expect(await keysUnder(client, bucket, 'p/')).toEqual(['p/whole.mp4']);
  });

  it('a body cut short after a whole part went up is no object at its key, and no upload is left', async () => {
    const bucket = await server.createBucket('cut');
    const store = await S3Store.open(`s3://${bucket}/p`, env());
    // 10 of 12 MiB: the first 8 MiB part is uploaded before the cut is seen.
    const outcome = await store.saveJob(request('cut', Buffer.alloc(10 * 1024 * 1024, 7), 12 * 1024 * 1024));
    expect(outcome.kind).toBe('error');
    expect(await keysUnder(client, bucket, 'p/')).toEqual([]);
    expect(await unfinishedUploads(client, bucket, 'p/')).toBe(0);
  }, 30_000);

  it('a small body cut short is no object either: one PUT lands whole or not at all', async () => {
    const bucket = await server.createBucket('smallcut');
    const store = await S3Store.open(`s3://${bucket}/p`, env());
    const outcome = await store.saveJob(request('smallcut', Buffer.alloc(50_000, 3), 100_000));
    expect(outcome).toEqual({ kind: 'error', message: expect.stringContaining('the download failed') });
    expect(await keysUnder(client, bucket, 'p/')).toEqual([]);
  });

  it('names the cause the same for every item: the run stops instead of failing the item', async () => {
    const bucket = await server.createBucket('refusing');
    const wrongSecret = await S3Store.open(
      `s3://${bucket}/p`,
      env({ AWS_SECRET_ACCESS_KEY: 'not-the-secret' }),
    );
    const refused = await wrongSecret.saveJob(request('refused', Buffer.from('bytes')));
    expect(refused).toMatchObject({ kind: 'error', local: true, code: 'SignatureDoesNotMatch' });
    expect(refused.kind === 'error' && refused.unreachable).toBeFalsy();
    expect(storeRefusal((refused as { code: string }).code, `s3://${bucket}/p`)?.kind).toBe('disk_refuses');
    expect(JSON.stringify(refused)).not.toContain('not-the-secret');

    const noBucket = await S3Store.open('s3://no-such-bucket-at-all/p', env());
    expect(await noBucket.saveJob(request('nobucket', Buffer.from('bytes')))).toMatchObject({
      kind: 'error',
      code: 'NoSuchBucket',
    });
    expect(await noBucket.probe(0)).toMatchObject({
      ok: false,
      step: 'write an object',
      code: 'NoSuchBucket',
    });
  });

  it('an endpoint that does not answer is unreachable: waited out, not a refusal', async () => {
    const gone = await S3Store.open(
      's3://anything/p',
      env({ AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${await closedPort()}` }),
    );
    const outcome = await gone.saveJob(request('gone', Buffer.from('bytes')));
    expect(outcome).toMatchObject({ kind: 'error', unreachable: true });
    expect(storeRefusal((outcome as { code?: string }).code, 's3://anything/p')).toBeNull();
  }, 30_000);

  it('cleans up what a killed run left under the staging folder, and nothing else', async () => {
    const bucket = await server.createBucket('cleanup');
    const store = await S3Store.open(`s3://${bucket}/p`, env());
    const { CreateMultipartUploadCommand, PutObjectCommand } = await import('@aws-sdk/client-s3');
    await client.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'p/.mediabatch-staging/left' }),
    );
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'p/.mediabatch-staging/stale', Body: 'x' }),
    );
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'p/keep.mp4', Body: 'y' }));
    await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'elsewhere/upload' }));
    expect(await store.cleanUp()).toBe(2);
    expect(await keysUnder(client, bucket, '')).toEqual(['p/keep.mp4']);
    expect(await unfinishedUploads(client, bucket, 'p/')).toBe(0);
    expect(await unfinishedUploads(client, bucket, 'elsewhere/')).toBe(1);
  });
});
