import { afterEach, describe, expect, it } from 'vitest';
import { type SandboxConfigInput, type SandboxHandle, startSandbox } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { LedgerBuilder, project } from './fixtures.js';

const MANIFEST = `version: 1
name: acct
input: {seconds: 6, definition: 720p}
items:
  - {id: seen, prompt: already paid for}
  - {id: next, prompt: to submit}
  - {id: after, prompt: to submit too}
`;

const open: SandboxHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sandbox) => sandbox.close()));
});

async function sandbox(config: SandboxConfigInput = {}): Promise<SandboxHandle> {
  const handle = await startSandbox(config, { port: 0 });
  open.push(handle);
  return handle;
}

/** One item paid at 0.25, so the two others are estimated at 0.50 together. */
async function pricedProject() {
  const { dir, manifest } = project(MANIFEST);
  const builder = await LedgerBuilder.open(dir, manifest);
  await builder.done('seen', '0.25');
  await builder.close();
  return dir;
}

describe('mediabatch plan: GET /account', () => {
  it('shows wallet, balance and concurrency, and sends nothing but GET /account', async () => {
    const service = await sandbox();
    const dir = await pricedProject();
    const env = { MEDIAGEN_API_KEY: service.apiKey };
    const json = await runCli(['plan', 'batch.yaml', '--base-url', service.baseUrl, '--json'], {
      cwd: dir,
      env,
    });
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.account).toEqual({
      base_url: service.baseUrl,
      wallet_enabled: true,
      balance_usd: '100.000000',
      concurrency: { active: 0, limit: 3 },
      error: null,
    });
    expect(doc.totals.estimate_usd).toBe('0.500000');
    expect(doc.warnings).toEqual([]);

    const text = await runCli(['plan', 'batch.yaml'], {
      cwd: dir,
      env: { ...env, MEDIAGEN_BASE_URL: service.baseUrl },
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      `account (${service.baseUrl}): wallet enabled, balance $100.00, concurrency 0/3 active`,
    );
    const requests = service.records().requests.map((request) => `${request.method} ${request.path}`);
    expect(requests).toEqual(['GET /v1/account', 'GET /v1/account']);
    expect(service.records().jobs).toEqual([]);
  });

  it('warns when the wallet is disabled and the balance is below the estimate', async () => {
    const service = await sandbox({
      workspaces: [{ id: 'ws_demo', balance_usd: '0.30', wallet_enabled: false, concurrency_limit: 3 }],
    });
    const dir = await pricedProject();
    const result = await runCli(['plan', 'batch.yaml', '--base-url', service.baseUrl, '--json'], {
      cwd: dir,
      env: { MEDIAGEN_API_KEY: service.apiKey },
    });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc.account).toMatchObject({ wallet_enabled: false, balance_usd: '0.300000', error: null });
    expect(doc.warnings).toEqual([
      expect.stringContaining('the API wallet is disabled'),
      expect.stringContaining('the balance $0.30 is below the estimate $0.50'),
    ]);
    const text = await runCli(['plan', 'batch.yaml', '--base-url', service.baseUrl], {
      cwd: dir,
      env: { MEDIAGEN_API_KEY: service.apiKey },
    });
    expect(text.stdout).toContain('wallet DISABLED, balance $0.30');
    expect(text.stdout).toContain('warning: the API wallet is disabled');
  });

  it('a refused key exits 3, says so clearly, and never prints the key', async () => {
    const service = await sandbox();
    const dir = await pricedProject();
    const badKey = 'mg_wrong_secret_key_0123456789';
    for (const json of [true, false]) {
      const result = await runCli(
        ['plan', 'batch.yaml', '--base-url', service.baseUrl, ...(json ? ['--json'] : [])],
        {
          cwd: dir,
          env: { MEDIAGEN_API_KEY: badKey },
        },
      );
      expect(result.code).toBe(3);
      expect(result.stdout + result.stderr).not.toContain(badKey);
      expect(result.stdout + result.stderr).not.toContain('secret_key');
      expect(result.stderr).toMatch(
        /GET \/account at .* failed: 401 invalid_api_key.*check MEDIAGEN_API_KEY/,
      );
      if (json) {
        expect(JSON.parse(result.stdout).account).toMatchObject({
          base_url: service.baseUrl,
          wallet_enabled: null,
          error: { status: 401, code: 'invalid_api_key' },
        });
      } else {
        expect(result.stdout).toContain('GET /account failed: 401 invalid_api_key');
      }
    }
    expect(service.records().requests.every((request) => request.method === 'GET')).toBe(true);
  });

  it('an unreachable service exits 1 as run would, after the pre-flight window, with the plan', async () => {
    const service = await sandbox();
    const closedUrl = service.baseUrl;
    await service.close();
    const dir = await pricedProject();
    const result = await runCli(['plan', 'batch.yaml', '--base-url', closedUrl], {
      cwd: dir,
      env: { MEDIAGEN_API_KEY: 'mg_some_key_0123456789', MEDIABATCH_PREFLIGHT_SECONDS: '0.3' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /GET \/account at http:\/\/127\.0\.0\.1:\d+\/v1 failed: cannot reach the service .*connection refused.*run would stop the same way/,
    );
    // The CLI's words: the flag, as on stdout's account line, never the library's option name.
    expect(result.stderr).toContain('Check --base-url / MEDIAGEN_BASE_URL and the network');
    expect(result.stderr).not.toContain('`');
    expect(result.stdout).toContain(
      'Plan: 2 new, 1 unchanged; expected $0.50 (based on 1 price seen), no upper bound.',
    );
    expect(result.stdout + result.stderr).not.toContain('mg_some_key');
  });

  it('never prints credentials or a query string embedded in the base URL', async () => {
    const service = await sandbox();
    const dir = await pricedProject();
    const url = new URL(service.baseUrl);
    const withExtras = `http://user:pa55word@${url.host}${url.pathname}?token=hidden`;
    const result = await runCli(['plan', 'batch.yaml', '--base-url', withExtras], {
      cwd: dir,
      env: { MEDIAGEN_API_KEY: service.apiKey },
    });
    expect(result.stdout + result.stderr).not.toMatch(/pa55word|hidden/);
  });
});
