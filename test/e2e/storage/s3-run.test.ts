import { readFileSync } from 'node:fs';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  type E2eProject,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';
import { type S3TestServer, s3TestClient, skipS3Tests, startS3Server } from '../../support/s3-server.js';
import { closedPort } from '../../support/services.js';
import {
  keysUnder,
  objectBytes,
  objectMetadata,
  objectSha256,
  putObject,
  succeededShaByItem,
  unfinishedUploads,
} from './s3-support.js';

/**
 * `output.dir: s3://...` against a real S3 server (OpenStack Swift's s3api on loopback): the same
 * promises as on disk, checked in the bucket with plain SDK calls, in the ledger with SQL and at
 * the sandbox that was paid.
 */
let server: S3TestServer;
let client: S3Client;
let sandbox: SandboxHandle | undefined;

describe.skipIf(skipS3Tests)('runs that save to an S3 bucket', () => {
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

  const items = (ids: string[]) =>
    `items:\n${ids.map((id) => `  - {id: ${id}, prompt: clip ${id}}`).join('\n')}\n`;

  async function s3Project(name: string, ids: string[], extra = '') {
    const bucket = await server.createBucket(name);
    const yaml = manifestYaml(name, `output: {dir: "s3://${bucket}/runs/${name}"}\n${extra}`) + items(ids);
    return { p: project(name, yaml), bucket, prefix: `runs/${name}` };
  }

  const run = (p: E2eProject, args: string[] = [], env: Record<string, string> = server.env) =>
    runAgainst(sandbox!, p, args, env);

  it('saves every output as a verified object with its sidecar, and a re-run pays and uploads nothing', async () => {
    sandbox = await startTestSandbox();
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const { p, bucket, prefix } = await s3Project('bucketrun', ids);
    const first = await run(p);
    expect(first.code, first.stderr).toBe(0);

    const keys = await keysUnder(client, bucket, `${prefix}/`);
    expect(keys).toEqual(
      [
        ...ids.flatMap((id) => [`${prefix}/${id}.json`, `${prefix}/${id}.mp4`]),
        `${prefix}/.mediabatch-owner.json`,
        `${prefix}/index.html`, // the gallery the run wrote as it ended
      ].sort(),
    );
    const paid = succeededShaByItem(sandbox, 'bucketrun');
    for (const id of ids) {
      expect(paid.get(id), id).toHaveLength(1);
      const sha = await objectSha256(client, bucket, `${prefix}/${id}.mp4`);
      expect(sha, id).toBe(paid.get(id)![0]);
      expect((await objectMetadata(client, bucket, `${prefix}/${id}.mp4`)).sha256).toBe(sha);
      const sidecar = JSON.parse((await objectBytes(client, bucket, `${prefix}/${id}.json`)).toString());
      expect(sidecar).toMatchObject({ item: id, file: { sha256: sha } });
    }
    const files = ledgerRows<{ path: string; sha256: string }>(
      p,
      'SELECT path, sha256 FROM files ORDER BY path',
    );
    expect(files.map((file) => file.path)).toEqual(ids.map((id) => `s3://${bucket}/${prefix}/${id}.mp4`));
    expect(await unfinishedUploads(client, bucket, prefix)).toBe(0);

    // No credential reaches the ledger, the sidecars or what the run printed.
    const ledgerBytes = readFileSync(p.ledger, 'latin1');
    for (const secret of [server.secretAccessKey, server.accessKeyId]) {
      expect(ledgerBytes).not.toContain(secret);
      expect(first.stdout + first.stderr).not.toContain(secret);
      for (const id of ids)
        expect((await objectBytes(client, bucket, `${prefix}/${id}.json`)).toString()).not.toContain(secret);
    }

    // status shows where the files are: s3:// URIs, not paths.
    const status = await runCli(['status', p.manifest], { cwd: p.dir });
    expect(status.stdout).toContain(`s3://${bucket}/${prefix}/a.mp4`);

    const posts = allPosts(sandbox).length;
    const again = await run(p);
    expect(again.code, again.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(await keysUnder(client, bucket, `${prefix}/`)).toEqual(keys);
  });

  it('uploads again an object that was deleted or altered, while the service still holds it, paying nothing', async () => {
    sandbox = await startTestSandbox();
    const { p, bucket, prefix } = await s3Project('altered', ['a', 'b']);
    expect((await run(p)).code).toBe(0);
    const before = await objectSha256(client, bucket, `${prefix}/a.mp4`);
    await putObject(client, bucket, `${prefix}/a.mp4`, 'not the video');
    const posts = allPosts(sandbox).length;
    const again = await run(p);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr + again.stdout).toContain(
      `a: saved file s3://${bucket}/${prefix}/a.mp4 is altered (not the bytes saved); fetching it again from job`,
    );
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(await objectSha256(client, bucket, `${prefix}/a.mp4`)).toBe(before);
  });

  it('streams a large output as a multipart upload, whole, and keeps an earlier take on --redo', async () => {
    sandbox = await startTestSandbox({ output_bytes: 20 * 1024 * 1024 });
    const { p, bucket, prefix } = await s3Project('large', ['big']);
    const first = await run(p);
    expect(first.code, first.stderr).toBe(0);
    const take1 = await objectSha256(client, bucket, `${prefix}/big.mp4`);
    expect((await objectBytes(client, bucket, `${prefix}/big.mp4`)).length).toBe(20 * 1024 * 1024);
    expect(take1).toBe(succeededShaByItem(sandbox, 'large').get('big')![0]);

    const redo = await run(p, ['--redo', 'big']);
    expect(redo.code, redo.stderr).toBe(0);
    const shas = succeededShaByItem(sandbox, 'large').get('big')!;
    expect(shas).toHaveLength(2);
    expect(await objectSha256(client, bucket, `${prefix}/big.take1.mp4`)).toBe(take1);
    expect(await objectSha256(client, bucket, `${prefix}/big.mp4`)).toBe(shas[1]);
    expect(await unfinishedUploads(client, bucket, prefix)).toBe(0);
    expect((await keysUnder(client, bucket, `${prefix}/.mediabatch-staging/`)).length).toBe(0);
  }, 60_000);

  it('never writes over an object this ledger did not write: that item is held back, not paid for', async () => {
    sandbox = await startTestSandbox();
    const { p, bucket, prefix } = await s3Project('foreign', ['a', 'b']);
    await putObject(client, bucket, `${prefix}/b.mp4`, 'somebody else made this');
    const result = await run(p);
    expect(result.code).toBe(1);
    expect(result.stderr + result.stdout).toContain(
      `b: not submitted: s3://${bucket}/${prefix}/b.mp4 is in the way, a file this ledger did not write`,
    );
    expect(succeededShaByItem(sandbox, 'foreign').has('b')).toBe(false);
    expect((await objectBytes(client, bucket, `${prefix}/b.mp4`)).toString()).toBe('somebody else made this');
  });

  it('refuses a prefix another batch owns, in plan and in run, before any request', async () => {
    sandbox = await startTestSandbox();
    const { p, bucket, prefix } = await s3Project('owner', ['a']);
    expect((await run(p)).code).toBe(0);
    const marker = JSON.parse(
      (await objectBytes(client, bucket, `${prefix}/.mediabatch-owner.json`)).toString(),
    );
    expect(marker).toMatchObject({ manifest: 'owner', ledger: p.ledger });
    const other = project(
      'other',
      `${manifestYaml('other', `output: {dir: "s3://${bucket}/${prefix}"}\n`)}${items(['a'])}`,
    );
    const posts = allPosts(sandbox).length;
    const plan = await runCli(['plan', other.manifest], { cwd: other.dir, env: server.env });
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stderr).toContain(
      `the output folder s3://${bucket}/${prefix} belongs to another batch: manifest owner`,
    );
    const refused = await run(other);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('belongs to another batch');
    expect(allPosts(sandbox)).toHaveLength(posts);
  });

  describe('a bucket that cannot take the files stops the run before anything is paid', () => {
    const cases: Array<[string, () => Promise<{ env: Record<string, string>; bucket: string }>, RegExp]> = [
      [
        'an unknown bucket',
        async () => ({ env: server.env, bucket: 'no-such-bucket-here' }),
        /bucket .*does not exist: create it, or fix output\.dir/,
      ],
      [
        'a wrong secret key',
        async () => ({
          env: { ...server.env, AWS_SECRET_ACCESS_KEY: 'wrong-secret-0123' },
          bucket: await server.createBucket('badkey'),
        }),
        /AWS_SECRET_ACCESS_KEY|AWS_ACCESS_KEY_ID/,
      ],
      [
        'an endpoint that does not answer',
        async () => ({
          env: { ...server.env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${await closedPort()}` },
          bucket: await server.createBucket('deadend'),
        }),
        /did not answer: check AWS_ENDPOINT_URL_S3/,
      ],
    ];
    it.each(cases)(
      '%s: exit 2, the location and the fix named, no POST, no secret shown',
      async (_, setUp, fix) => {
        sandbox = await startTestSandbox();
        const { env, bucket } = await setUp();
        const yaml = `${manifestYaml('refused', `output: {dir: "s3://${bucket}/x"}\n`)}${items(['a'])}`;
        const p = project('refused', yaml);
        const result = await runCli(['run', p.manifest, '--poll-interval', '0.1'], {
          cwd: p.dir,
          env: { ...cliEnv(sandbox), ...env },
          timeoutMs: 120_000,
        });
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toContain(`s3://${bucket}/x`);
        expect(result.stderr).toMatch(fix);
        expect(result.stderr).not.toMatch(/\n\s+at /);
        expect(result.stderr).not.toContain(env.AWS_SECRET_ACCESS_KEY);
        expect(allPosts(sandbox)).toHaveLength(0);
      },
      130_000,
    );
  });

  it('kill -9 mid-upload, then a re-run: one charge per item, every object whole, no upload left', async () => {
    sandbox = await startTestSandbox({
      output_bytes: 24 * 1024 * 1024,
      faults: { download_bytes_per_second: 16 * 1024 * 1024 },
    });
    const { p, bucket, prefix } = await s3Project('killed', ['k1', 'k2', 'k3']);
    const { spawnCli } = await import('../../support/cli.js');
    const { child, done } = spawnCli(['run', p.manifest, '--poll-interval', '0.1'], {
      cwd: p.dir,
      env: { ...cliEnv(sandbox), ...server.env },
    });
    // Some multipart upload has begun (parts are 8 MiB): kill the run in the middle of it.
    await waitUntil(
      () =>
        sandbox!
          .records()
          .requests.some((request) => request.method === 'GET' && request.path.includes('/files/')),
      30_000,
      'a download',
    );
    await new Promise((resolve) => setTimeout(resolve, 900));
    child.kill('SIGKILL');
    await done;
    const again = await run(p);
    expect(again.code, again.stderr).toBe(0);
    const paid = succeededShaByItem(sandbox, 'killed');
    for (const id of ['k1', 'k2', 'k3']) {
      expect(paid.get(id), id).toHaveLength(1);
      expect(await objectSha256(client, bucket, `${prefix}/${id}.mp4`), id).toBe(paid.get(id)![0]);
    }
    expect(await unfinishedUploads(client, bucket, prefix)).toBe(0);
    expect(await keysUnder(client, bucket, `${prefix}/.mediabatch-staging/`)).toEqual([]);
  }, 90_000);

  it('waits out an S3 server restarted mid-run, and finishes', async () => {
    sandbox = await startTestSandbox({ running_seconds: { min: 1.5, max: 2 } });
    const ids = ['r1', 'r2', 'r3', 'r4'];
    const { p, bucket, prefix } = await s3Project('restart', ids);
    const { spawnCli } = await import('../../support/cli.js');
    const { done } = spawnCli(['run', p.manifest, '--poll-interval', '0.1'], {
      cwd: p.dir,
      env: { ...cliEnv(sandbox), ...server.env },
      timeoutMs: 120_000,
    });
    // The pre-flight wrote its probe; once jobs run, the S3 server goes away for a few seconds.
    await waitUntil(() => allPosts(sandbox!).length >= 3, 20_000, 'the first submissions');
    await server.stopProxy();
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await server.startProxy();
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    const paid = succeededShaByItem(sandbox, 'restart');
    for (const id of ids) {
      expect(paid.get(id), id).toHaveLength(1);
      expect(await objectSha256(client, bucket, `${prefix}/${id}.mp4`), id).toBe(paid.get(id)![0]);
    }
  }, 130_000);
});
