import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { jobVideo } from '../../src/sandbox/mp4.js';
import { PART_BYTES, PARTS_IN_FLIGHT } from '../../src/storage/s3-upload.js';
import { type S3TestServer, s3TestClient } from '../support/s3-server.js';
import { benchDir, removeDir } from './fixtures.js';
import { type CpuWindow, machineCpu } from './machine-cpu.js';
import { OUTPUT_BYTES, S3_ITEMS } from './s3-bench.js';

/**
 * The physical references of scenario 11: the same 1,000 x 4 MiB moved by the plainest code that
 * can move them, in the bench process, with nothing else of mediabatch in the way. What a run
 * reaches beside these is what its own work costs.
 */
export interface RateSample {
  what: string;
  concurrency: number;
  wallMs: number;
  mibPerSecond: number;
  machine: CpuWindow;
  /** The S3 server's processes over the measurement (set by withSwift). */
  serverCpuS?: number;
}

/** `count` tasks, `concurrency` at a time, timed along with the machine's CPUs. */
async function timed(
  what: string,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<RateSample> {
  const cpu = machineCpu();
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < S3_ITEMS) {
      const index = next;
      next += 1;
      await task(index);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;
  return {
    what,
    concurrency,
    wallMs,
    mibPerSecond: (S3_ITEMS * OUTPUT_BYTES) / 1024 / 1024 / (wallMs / 1000),
    machine: cpu.end(),
  };
}

const bytes = () => jobVideo('job_bench_reference', { orientation: '16:9', seconds: 5 }, OUTPUT_BYTES);

/**
 * The disk's write rate for these files: each written whole, fsynced and closed, `concurrency` at a
 * time, into a folder in the OS temp dir (where the runs and Swift keep theirs).
 */
export async function diskWriteRate(concurrency: number): Promise<RateSample> {
  const body = bytes();
  const dir = benchDir('s3-disk-rate');
  try {
    return await timed('disk write + fsync', concurrency, async (index) => {
      const file = await open(join(dir, `f-${index}.mp4`), 'wx');
      try {
        await file.write(body);
        await file.sync();
      } finally {
        await file.close();
      }
    });
  } finally {
    removeDir(dir);
  }
}

/**
 * The server's ingest rate: one lib-storage Upload per file (the store's part size and parts in
 * flight, so a 4 MiB file is one PutObject), `concurrency` at a time, into a new bucket.
 */
export async function s3IngestRate(server: S3TestServer, concurrency: number): Promise<RateSample> {
  const body = bytes();
  const bucket = await server.createBucket('mb-bench-put');
  const client = s3TestClient(server);
  try {
    return await timed('S3 PUT', concurrency, async (index) => {
      await put(client, bucket, `raw/f-${index}.mp4`, body, 'video/mp4');
    });
  } finally {
    client.destroy();
  }
}

/**
 * The server's rate for the store's own round of requests per file, with none of mediabatch's
 * other work: for a file of at most one part (these are), one PUT to its key with its SHA-256
 * metadata and Content-MD5, then a small sidecar PUT. `concurrency` at a time: the run's own is
 * its download concurrency.
 */
export async function s3SaveRoundRate(server: S3TestServer, concurrency: number): Promise<RateSample> {
  const body = bytes();
  if (body.length > PART_BYTES) throw new Error('the reference round assumes files of one part');
  const md5 = createHash('md5').update(body).digest('base64');
  const sha256 = createHash('sha256').update(body).digest('hex');
  const sidecar = Buffer.from(`${JSON.stringify({ item: 'reference', bytes: OUTPUT_BYTES }, null, 2)}\n`);
  const bucket = await server.createBucket('mb-bench-round');
  const client = s3TestClient(server);
  try {
    return await timed('S3 PUT with MD5 + sidecar', concurrency, async (index) => {
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `round/f-${index}.mp4`,
          Body: body,
          ContentType: 'video/mp4',
          ContentMD5: md5,
          Metadata: { sha256 },
        }),
      );
      await put(client, bucket, `round/f-${index}.json`, sidecar, 'application/json');
    });
  } finally {
    client.destroy();
  }
}

async function put(
  client: S3Client,
  bucket: string,
  key: string,
  body: Buffer,
  contentType: string,
): Promise<void> {
  const upload = new Upload({
    client,
    params: { Bucket: bucket, Key: key, Body: body, ContentType: contentType },
    partSize: PART_BYTES,
    queueSize: PARTS_IN_FLIGHT,
    leavePartsOnError: false,
  });
  await upload.done();
}
