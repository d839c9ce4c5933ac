import { createHash } from 'node:crypto';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { SandboxHandle } from '../../../src/sandbox/index.js';

/**
 * Plain SDK reads of the test bucket, independent of mediabatch's own store: what a person
 * would see in the bucket after a run.
 */
export async function keysUnder(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const entry of page.Contents ?? []) keys.push(entry.Key!);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

export async function objectBytes(client: S3Client, bucket: string, key: string): Promise<Buffer> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}

export async function objectSha256(client: S3Client, bucket: string, key: string): Promise<string> {
  return createHash('sha256')
    .update(await objectBytes(client, bucket, key))
    .digest('hex');
}

export async function objectMetadata(client: S3Client, bucket: string, key: string) {
  return (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).Metadata ?? {};
}

export async function putObject(client: S3Client, bucket: string, key: string, body: string): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

export async function unfinishedUploads(client: S3Client, bucket: string, prefix: string): Promise<number> {
  const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
  return page.Uploads?.length ?? 0;
}

/** The sandbox's succeeded jobs of a manifest, by item: each item's file SHA-256 as the service made it. */
export function succeededShaByItem(sandbox: SandboxHandle, manifest: string): Map<string, string[]> {
  const byItem = new Map<string, string[]>();
  for (const job of sandbox.records().jobs) {
    if (job.metadata['mediabatch.manifest'] !== manifest || job.status !== 'succeeded') continue;
    const item = String(job.metadata['mediabatch.item']);
    byItem.set(item, [...(byItem.get(item) ?? []), job.files[0]!.sha256]);
  }
  return byItem;
}
