import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, spawnCli } from '../../support/cli.js';
import {
  allPosts,
  expectMoneyAgrees,
  manifestYaml,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';
import {
  boundService,
  closedPort,
  impostor,
  itemStates,
  ownProject,
  requestLog,
} from '../../support/services.js';
import { sleep } from '../faults/support.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const KEY = 'mg_test_key_000000000000';
const items = (ids: string[]) =>
  `items:\n${ids.map((id) => `  - {id: ${id}, prompt: "take ${id}"}\n`).join('')}`;

/** A project where item a is done and b was added afterwards (never run). */
async function halfDone(name: string) {
  sandbox = await startTestSandbox();
  const p = ownProject(name, `${manifestYaml(name)}${items(['a'])}`);
  const first = await runAgainst(sandbox, p);
  expect(first.code, first.stderr).toBe(0);
  const { writeFileSync } = await import('node:fs');
  writeFileSync(p.manifest, `${manifestYaml(name)}${items(['a', 'b'])}`);
  return p;
}

describe('run: pre-flight before spending', () => {
  it('a base URL without /v1 is a usage error with a hint; nothing is sent or marked failed', async () => {
    sandbox = await startTestSandbox();
    const p = ownProject('novone', `${manifestYaml('novone')}${items(['a', 'b'])}`);
    const origin = sandbox.baseUrl.replace(/\/v1$/, '');
    const result = await runAgainst(sandbox, p, ['--base-url', origin]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${origin} has no GET /account (404 route_not_found`);
    expect(result.stderr).toContain(`did you mean --base-url ${origin}/v1 ?`);
    expect(result.stderr).toContain('nothing was submitted and no item changed');
    expect(requestLog(sandbox)).toEqual(['GET /account 404']);
    expect(itemStates(p)).toEqual({});
    expect(boundService(p)).toBeNull();

    const fixed = await runAgainst(sandbox, p);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(itemStates(p)).toEqual({ a: 'done', b: 'done' });
    expect(allPosts(sandbox)).toHaveLength(2);
    await expectMoneyAgrees(sandbox, p, 'novone');
  });

  it('another 404 (a wrong host path) says to check the address', async () => {
    const wrong = await impostor(404, '<h1>Not Found</h1>');
    const p = ownProject('wronghost', `${manifestYaml('wronghost')}${items(['a'])}`);
    const result = await runCli(['run', p.manifest, '--base-url', wrong.baseUrl], {
      cwd: p.dir,
      env: { MEDIAGEN_API_KEY: KEY },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('HTTP 404 without an error envelope');
    expect(result.stderr).toContain('Check the host and port');
    expect(wrong.requests).toEqual([{ method: 'GET', url: '/v1/account' }]);
    expect(boundService(p)).toBeNull();
  });

  it('an address that answers, but not as the service, is a usage error', async () => {
    const page = await impostor(200, '<html>welcome to the router</html>');
    const p = ownProject('router', `${manifestYaml('router')}${items(['a'])}`);
    const result = await runCli(['run', p.manifest, '--base-url', page.baseUrl], {
      cwd: p.dir,
      env: { MEDIAGEN_API_KEY: KEY },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('answered GET /account, but not as the video service does');
    expect(page.requests.map((request) => request.method)).toEqual(['GET']);
    expect(boundService(p)).toBeNull();
  });

  it('nothing listening: a few visible retries within MEDIABATCH_PREFLIGHT_SECONDS, then exit 1', async () => {
    const p = await halfDone('closed');
    await sandbox!.stopListening();
    const started = Date.now();
    const result = await runAgainst(sandbox!, p, [], { MEDIABATCH_PREFLIGHT_SECONDS: '1.5' });
    const elapsed = Date.now() - started;
    expect(result.code).toBe(1);
    const retries = result.stderr.split('\n').filter((line) => line.includes('trying again in'));
    expect(retries).toHaveLength(4);
    expect(retries[0]).toContain(`cannot reach ${sandbox!.baseUrl} (connection refused`);
    expect(result.stderr).toContain('after 5 tries over 1.5s; nothing was submitted and no item changed');
    expect(elapsed).toBeGreaterThanOrEqual(1500);
    expect(itemStates(p)).toEqual({ a: 'done' });
    expect(boundService(p)).toBe(sandbox!.baseUrl);

    await sandbox!.resumeListening();
    const back = await runAgainst(sandbox!, p);
    expect(back.code, back.stderr).toBe(0);
    expect(itemStates(p)).toEqual({ a: 'done', b: 'done' });
    await expectMoneyAgrees(sandbox!, p, 'closed');
  });

  it('a host that does not exist stops run, plan and import at once (exit 2), naming the host', async () => {
    // .invalid never resolves (RFC 2606): the DNS says "no such name", a typo, not an outage.
    const baseUrl = 'http://mediabatch-typo.invalid/v1';
    const p = ownProject('nohost', `${manifestYaml('nohost')}${items(['a'])}`);
    for (const command of ['run', 'plan', 'import']) {
      const started = Date.now();
      const result = await runCli([command, p.manifest, '--base-url', baseUrl], {
        cwd: p.dir,
        env: { MEDIAGEN_API_KEY: KEY },
        timeoutMs: 20_000,
      });
      expect(Date.now() - started, command).toBeLessThan(5000);
      expect(result.code, `${command}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(
        `no such host: mediabatch-typo.invalid (from ${baseUrl}) is not a name the DNS knows; check the host in --base-url / MEDIAGEN_BASE_URL for a typo`,
      );
      expect(result.stderr).not.toContain('trying again');
      expect(result.stderr).not.toContain('`');
      expect(existsSync(join(p.dir, '.mediabatch')), command).toBe(false);
    }
  });

  it('a service answering 500 to every pre-flight is given the window, then the run stops', async () => {
    const broken = await impostor(
      500,
      JSON.stringify({
        error: { type: 'api_error', code: 'internal_error', message: 'down', request_id: 'req_1' },
      }),
      'application/json',
    );
    const p = ownProject('fivehundred', `${manifestYaml('fivehundred')}${items(['a'])}`);
    const result = await runCli(['run', p.manifest, '--base-url', broken.baseUrl], {
      cwd: p.dir,
      env: { MEDIAGEN_API_KEY: KEY, MEDIABATCH_PREFLIGHT_SECONDS: '0.6' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no answer from');
    expect(broken.requests.map((request) => `${request.method} ${request.url}`)).toEqual(
      Array(5).fill('GET /v1/account'),
    );
    expect(boundService(p)).toBeNull();
  });

  it('Ctrl-C during the pre-flight retries stops at once (exit 130)', async () => {
    const p = ownProject('ctrlc', `${manifestYaml('ctrlc')}${items(['a'])}`);
    const port = await closedPort();
    const { child, done } = spawnCli(['run', p.manifest, '--base-url', `http://127.0.0.1:${port}/v1`], {
      cwd: p.dir,
      env: { MEDIAGEN_API_KEY: KEY, MEDIABATCH_PREFLIGHT_SECONDS: '60' },
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    while (!stderr.includes('trying again in')) await sleep(20);
    const signalled = Date.now();
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    expect(Date.now() - signalled).toBeLessThan(3000);
    expect(result.stderr).toContain('interrupted before anything was submitted');
  });

  it('a refused key still ends with exit 3 and no POST, and binds nothing (no ledger is left)', async () => {
    sandbox = await startTestSandbox();
    const p = ownProject('refused', `${manifestYaml('refused')}${items(['a'])}`);
    const result = await runAgainst(sandbox, p, [], { MEDIAGEN_API_KEY: 'mg_wrong_key_1234567890' });
    expect(result.code).toBe(3);
    expect(allPosts(sandbox)).toHaveLength(0);
    expect(boundService(p)).toBeNull();
    expect(sandbox.records().jobs).toHaveLength(0);
  });
});
