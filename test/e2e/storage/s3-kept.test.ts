import { rmSync } from 'node:fs';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';
import { type S3TestServer, s3TestClient, skipS3Tests, startS3Server } from '../../support/s3-server.js';
import { putObject } from './s3-support.js';

/**
 * `export --kept` with the outputs in a bucket (docs/gallery.md, "`export --kept` checks the kept
 * files"): each kept object is asked for with a HEAD, its size and stored SHA-256 compared, against
 * a real S3 server (Swift's s3api on loopback).
 */
let server: S3TestServer;
let client: S3Client;
let sandbox: SandboxHandle | undefined;

describe.skipIf(skipS3Tests)('export --kept from a bucket', () => {
  beforeAll(async () => {
    server = await startS3Server();
    client = s3TestClient(server);
  }, 60_000);
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
    await sandbox?.close();
  });

  it('names a kept object deleted and one replaced, exits 1, and writes every record', async () => {
    sandbox = await startTestSandbox();
    const bucket = await server.createBucket('keptcheck');
    const prefix = 'runs/keptcheck';
    const items = ['a', 'b', 'c'].map((id) => `  - {id: ${id}, prompt: "Shot ${id}"}`).join('\n');
    const p = project(
      'keptcheck',
      `${manifestYaml('keptcheck', `output: {dir: "s3://${bucket}/${prefix}"}\n`)}items:\n${items}\n`,
    );
    try {
      expect((await runAgainst(sandbox, p, [], server.env)).code).toBe(0);
      const exportKept = () => runCli(['export', p.manifest, '--kept'], { cwd: p.dir, env: server.env });
      const intact = await exportKept();
      expect([intact.code, intact.stderr]).toEqual([0, '']);

      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}/a.mp4` }));
      await putObject(client, bucket, `${prefix}/b.mp4`, 'not the video that was paid for');
      const checked = await exportKept();
      expect(checked.code).toBe(1);
      // One variant, one take each: kept by themselves, and every record is written.
      expect(
        checked.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).id),
      ).toEqual(['a', 'b', 'c']);
      expect(checked.stderr).toContain('2 kept files not as saved');
      expect(checked.stderr).toContain(`a: s3://${bucket}/${prefix}/a.mp4 missing`);
      expect(checked.stderr).toContain(`b: s3://${bucket}/${prefix}/b.mp4 altered`);
      expect(checked.stderr).not.toContain('c: ');
    } finally {
      rmSync(p.dir, { recursive: true, force: true });
    }
  });
});
