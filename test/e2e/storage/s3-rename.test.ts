import { rmSync, writeFileSync } from 'node:fs';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  allPosts,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';
import { type S3TestServer, s3TestClient, skipS3Tests, startS3Server } from '../../support/s3-server.js';
import { keysUnder, objectBytes, objectSha256 } from './s3-support.js';

/**
 * A rename in a bucket (docs/storage.md): the objects are copied to their new keys and the old
 * ones deleted, against a real S3 server (Swift's s3api on loopback), and nothing is paid.
 */
let server: S3TestServer;
let client: S3Client;
let sandbox: SandboxHandle | undefined;

describe.skipIf(skipS3Tests)('renaming an item whose outputs are in a bucket', () => {
  beforeAll(async () => {
    server = await startS3Server();
    client = s3TestClient(server);
  }, 60_000);
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
    await sandbox?.close();
  });

  it('moves the object and its sidecar to the new keys and pays nothing', async () => {
    sandbox = await startTestSandbox();
    const bucket = await server.createBucket('renames3');
    const prefix = 'runs/renames3';
    const yaml = (id: string) =>
      `${manifestYaml('renames3', `output: {dir: "s3://${bucket}/${prefix}"}\n`)}items:\n  - {id: ${id}, prompt: A pier}\n  - {id: keep, prompt: A gull}\n`;
    const p = project('renames3', yaml('pier'));
    try {
      expect((await runAgainst(sandbox, p, [], server.env)).code).toBe(0);
      const sha = await objectSha256(client, bucket, `${prefix}/pier.mp4`);
      writeFileSync(p.manifest, yaml('long-pier'));
      const posts = allPosts(sandbox).length;
      const run = await runAgainst(sandbox, p, [], server.env);
      expect(run.code, run.stderr).toBe(0);
      expect(allPosts(sandbox)).toHaveLength(posts);
      expect(await keysUnder(client, bucket, `${prefix}/`)).toEqual(
        [
          `${prefix}/.mediabatch-owner.json`,
          `${prefix}/index.html`, // the gallery the run refreshed as it ended
          `${prefix}/keep.json`,
          `${prefix}/keep.mp4`,
          `${prefix}/long-pier.json`,
          `${prefix}/long-pier.mp4`,
        ].sort(),
      );
      expect(await objectSha256(client, bucket, `${prefix}/long-pier.mp4`)).toBe(sha);
      const sidecar = JSON.parse((await objectBytes(client, bucket, `${prefix}/long-pier.json`)).toString());
      expect(sidecar).toMatchObject({ item: 'long-pier', file: { sha256: sha } });
      const status = await statusJson(p);
      expect(status.items.find((item) => item.id === 'long-pier')?.files).toEqual([
        `s3://${bucket}/${prefix}/long-pier.mp4`,
      ]);
    } finally {
      rmSync(p.dir, { recursive: true, force: true });
    }
  });
});
