import { rmSync } from 'node:fs';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importJobs, loadManifest, plan, run, type SandboxHandle, UserError } from '../../../src/index.js';
import { allPosts, cliEnv, ledgerRows, manifestYaml, startTestSandbox } from '../../support/e2e.js';
import { type S3TestServer, s3TestClient, skipS3Tests, startS3Server } from '../../support/s3-server.js';
import { ownProject, takeItems } from '../../support/services.js';
import { keysUnder, objectSha256, succeededShaByItem } from './s3-support.js';

/**
 * The library with the S3 settings in its `env` option only (docs/api.md: "a given env wins
 * everywhere, the S3 store included"): the process's environment holds no AWS_* variable while
 * run() and importJobs() save into a real S3 server (OpenStack Swift's s3api on loopback). The
 * bucket is checked with plain SDK calls, against the bytes the sandbox made.
 */
let server: S3TestServer;
let client: S3Client;
let sandbox: SandboxHandle | undefined;

/** The process's AWS_* variables, put back after each test; the library may set its own meanwhile. */
let saved: Record<string, string> = {};
const awsNames = () => Object.keys(process.env).filter((name) => name.startsWith('AWS_'));

describe.skipIf(skipS3Tests)('run() and importJobs() with the S3 settings in `env` only', () => {
  beforeAll(async () => {
    server = await startS3Server();
    client = s3TestClient(server);
  }, 60_000);
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
  });
  beforeEach(() => {
    saved = {};
    for (const name of awsNames()) {
      saved[name] = process.env[name]!;
      delete process.env[name];
    }
  });
  afterEach(async () => {
    for (const name of awsNames()) delete process.env[name];
    Object.assign(process.env, saved);
    await sandbox?.close();
    sandbox = undefined;
  });

  /** The environment the calls are given: the S3 settings and the service, nothing from the process. */
  const callEnv = () => ({ ...server.env, ...cliEnv(sandbox!) });

  /** No S3 setting is in the process's environment: only `env` can have told the library. */
  const expectNoS3SettingsInProcess = () => {
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_ENDPOINT_URL_S3', 'AWS_REGION'])
      expect(process.env[name], name).toBeUndefined();
  };

  it('run() saves every output into the bucket; importJobs() rebuilds a lost ledger from it', async () => {
    sandbox = await startTestSandbox();
    expect(Object.keys(server.env).sort()).toEqual(
      ['AWS_ACCESS_KEY_ID', 'AWS_ENDPOINT_URL_S3', 'AWS_REGION', 'AWS_SECRET_ACCESS_KEY'].sort(),
    );
    const bucket = await server.createBucket('envrun');
    const prefix = 'runs/envrun';
    const ids = ['a', 'b', 'c'];
    const p = ownProject(
      'envrun',
      `${manifestYaml('envrun', `output: {dir: "s3://${bucket}/${prefix}"}\n`)}${takeItems(ids)}`,
    );
    const manifest = loadManifest(p.manifest);

    expectNoS3SettingsInProcess();
    const first = await run(manifest, { env: callEnv(), cwd: p.dir, pollIntervalSeconds: 0.1 }).result;
    expect(first.outcome, JSON.stringify(first.status.totals)).toBe('done');

    // The bucket holds each output, byte for byte what the sandbox made, and the owner marker.
    const keys = await keysUnder(client, bucket, `${prefix}/`);
    expect(keys).toEqual(
      [
        ...ids.flatMap((id) => [`${prefix}/${id}.json`, `${prefix}/${id}.mp4`]),
        `${prefix}/.mediabatch-owner.json`,
        `${prefix}/index.html`, // the gallery the run wrote as it ended
      ].sort(),
    );
    const made = succeededShaByItem(sandbox, 'envrun');
    for (const id of ids) {
      expect(made.get(id), id).toHaveLength(1);
      expect(await objectSha256(client, bucket, `${prefix}/${id}.mp4`), id).toBe(made.get(id)![0]);
    }
    const recorded = () =>
      ledgerRows<{ path: string; sha256: string }>(p, 'SELECT path, sha256 FROM files ORDER BY path');
    const expected = ids.map((id) => ({
      path: `s3://${bucket}/${prefix}/${id}.mp4`,
      sha256: made.get(id)![0],
    }));
    expect(recorded()).toEqual(expected);
    expect(first.status.items.map((item) => item.files)).toEqual(
      ids.map((id) => [`s3://${bucket}/${prefix}/${id}.mp4`]),
    );

    // plan() reads the bucket's owner marker through the same env: another batch there is refused.
    const intruder = ownProject(
      'intruder',
      `${manifestYaml('intruder', `output: {dir: "s3://${bucket}/${prefix}"}\n`)}${takeItems(['a'])}`,
    );
    const refused = await plan(loadManifest(intruder.manifest), { env: callEnv(), cwd: intruder.dir }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as UserError).code).toBe('output_owned');

    // The ledger is lost; import rebuilds it from the service, finding the objects whole.
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${p.ledger}${suffix}`, { force: true });
    const posts = allPosts(sandbox).length;
    expectNoS3SettingsInProcess();
    const imported = await importJobs(manifest, { env: callEnv(), cwd: p.dir });
    expect(imported.items.map((item) => [item.id, item.state])).toEqual(ids.map((id) => [id, 'done']));
    expect(recorded()).toEqual(expected);
    expect(await keysUnder(client, bucket, `${prefix}/`)).toEqual(keys);
    for (const id of ids)
      expect(await objectSha256(client, bucket, `${prefix}/${id}.mp4`), id).toBe(made.get(id)![0]);

    // The rebuilt ledger is the run's: the next run pays and uploads nothing.
    const again = await run(manifest, { env: callEnv(), cwd: p.dir, pollIntervalSeconds: 0.1 }).result;
    expect(again.outcome).toBe('done');
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(await keysUnder(client, bucket, `${prefix}/`)).toEqual(keys);
  }, 90_000);
});
