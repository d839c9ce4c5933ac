import { rmSync } from 'node:fs';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';
import { type S3TestServer, s3TestClient, skipS3Tests, startS3Server } from '../../support/s3-server.js';
import { keysUnder, objectSha256, succeededShaByItem } from './s3-support.js';

/**
 * A lost ledger of a batch saved to a bucket, rebuilt by `import`: the objects already there hold
 * exactly the service's bytes, so they are recorded as saved, not refused and not paid for again.
 */
let server: S3TestServer;
let client: S3Client;
let sandbox: SandboxHandle | undefined;

describe.skipIf(skipS3Tests)('import into an S3 location', () => {
  beforeAll(async () => {
    server = await startS3Server();
    client = s3TestClient(server);
  }, 60_000);
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
  });
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('rebuilds the ledger from the service, finds the objects whole, and the next run pays nothing', async () => {
    sandbox = await startTestSandbox();
    const bucket = await server.createBucket('imported');
    const ids = ['a', 'b', 'c'];
    const items = ids.map((id) => `  - {id: ${id}, prompt: clip ${id}}`).join('\n');
    const p = project(
      'imp',
      `${manifestYaml('imp', `output: {dir: "s3://${bucket}/imp"}\n`)}items:\n${items}\n`,
    );
    const env = { ...cliEnv(sandbox), ...server.env };
    expect((await runAgainst(sandbox, p, [], server.env)).code).toBe(0);
    const keys = await keysUnder(client, bucket, 'imp/');
    rmSync(p.ledger);

    const imported = await runCli(['import', p.manifest], { cwd: p.dir, env });
    expect(imported.code, imported.stderr).toBe(0);
    const files = ledgerRows<{ path: string; sha256: string }>(
      p,
      'SELECT path, sha256 FROM files ORDER BY path',
    );
    const paid = succeededShaByItem(sandbox, 'imp');
    expect(files).toEqual(
      ids.map((id) => ({ path: `s3://${bucket}/imp/${id}.mp4`, sha256: paid.get(id)![0] })),
    );
    for (const id of ids) expect(await objectSha256(client, bucket, `imp/${id}.mp4`)).toBe(paid.get(id)![0]);
    expect(await keysUnder(client, bucket, 'imp/')).toEqual(keys);

    const posts = allPosts(sandbox).length;
    const again = await runAgainst(sandbox, p, [], server.env);
    expect(again.code, again.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
  }, 60_000);
});
