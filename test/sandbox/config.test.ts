import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { exitCodeOfError } from '../../src/exit-codes.js';
import {
  DEMO_API_KEY,
  demoSandboxConfig,
  loadSandboxConfig,
  sandboxConfigSchema,
  startSandbox,
} from '../../src/sandbox/index.js';
import { MediaGenClient } from '../../src/service-client/index.js';
import { body, newKey, setup } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mediabatch-sandbox-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function yamlFile(text: string): string {
  const file = join(dir, `config-${++files}.yaml`);
  writeFileSync(file, text);
  return file;
}

function loadError(text: string): string {
  const file = yamlFile(text);
  try {
    loadSandboxConfig(file);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect(exitCodeOfError((error as UserError).code)).toBe(2);
    expect((error as Error).message).toContain(file);
    return (error as Error).message;
  }
  throw new Error('expected the config to be rejected');
}

describe('sandbox: configuration', () => {
  it('loads snake_case YAML and fills service-faithful defaults', () => {
    const config = loadSandboxConfig(
      yamlFile(`
seed: 3
keys:
  - {key: mg_live_custom_key_1, id: 7, workspace: acme}
workspaces:
  - {id: acme, balance_usd: 12.5, concurrency_limit: 5}
faults:
  job_failures: {model_busy: 0.1}
  latency_ms: {min: 5, max: 10}
page_size_cap: 10
`),
    );
    expect(config.workspaces[0]).toEqual({
      id: 'acme',
      balance_usd: '12.500000',
      wallet_enabled: true,
      concurrency_limit: 5,
    });
    expect(config.keys[0]).toEqual({ key: 'mg_live_custom_key_1', id: 7, workspace: 'acme', revoked: false });
    expect(config).toMatchObject({
      retry_after_seconds: 10,
      url_lifetime_seconds: 3600,
      retention_seconds: 172_800,
      job_timeout_seconds: 1800,
      idempotency_ttl_seconds: 86_400,
      page_size_cap: 10,
      models: ['acme-video-2', 'acme-video-3'],
      prices: { per_second_usd: { '480p': '0.020000', '720p': '0.050000', '1080p': '0.100000' } },
      input: {
        seconds: { min: 1, max: 20, default: 5 },
        default_definition: '720p',
        unknown_fields: 'accept',
      },
      unknown_body_fields: 'reject',
      faults: { job_failures: { model_busy: 0.1 }, http500_before_store: 0, latency_ms: { min: 5, max: 10 } },
    });
  });

  it('names the file and the offending field', () => {
    expect(
      loadError(
        'workspaces: [{id: w, balance_usd: "1.2345678"}]\nkeys: [{key: mg_abcdefgh, id: 1, workspace: w}]',
      ),
    ).toContain('workspaces[0].balance_usd');
    expect(loadError('keys: [{key: sk_abcdefgh, id: 1, workspace: ws_demo}]')).toContain('keys[0].key');
    expect(loadError('keys: [{key: mg_abcdefgh, id: 1, workspace: nowhere}]')).toContain('keys[0].workspace');
    expect(loadError('keys: [{key: mg_abcdefgh, id: 0, workspace: ws_demo}]')).toContain('keys[0].id');
    expect(loadError('faults: {http500: 0.5}')).toContain('faults');
    expect(loadError('faults: {job_failures: {model_busy: 0.7, timeout: 0.5}}')).toContain(
      'faults.job_failures',
    );
    expect(loadError('running_seconds: {min: 5, max: 1}')).toContain('running_seconds');
    expect(loadError('input: {definitions: ["720p", "4k"]}')).toContain('input.definitions[1]');
    expect(loadError('input: {definitions: ["720p", "2160p"]}')).toContain('prices.per_second_usd.2160p');
    expect(loadError('retry_after: 3')).toContain('retry_after');
    expect(loadError('seed: [1')).toMatch(/seed|flow|collection|end/i);
  });

  it('reports an unreadable file as a UserError', () => {
    expect(() => loadSandboxConfig(join(dir, 'missing.yaml'))).toThrow(/missing\.yaml.*ENOENT/);
  });

  it('demo config: funded wallet, the demo key, jobs of one to three seconds', async () => {
    const demo = sandboxConfigSchema.parse(demoSandboxConfig());
    expect(DEMO_API_KEY.startsWith('mg_demo_')).toBe(true);
    expect(demo.keys[0]?.key).toBe(DEMO_API_KEY);
    expect(Number(demo.workspaces[0]?.balance_usd)).toBeGreaterThanOrEqual(10);
    // The demo's times as written: a fixed queue and a uniform range.
    const times = demoSandboxConfig();
    expect(demo.queued_seconds).toBe(times.queued_seconds);
    expect(times.queued_seconds + times.running_seconds.min).toBeGreaterThanOrEqual(1);
    expect(times.queued_seconds + times.running_seconds.max).toBeLessThanOrEqual(3);
    const sandbox = await startSandbox(demoSandboxConfig());
    try {
      expect(sandbox.apiKey).toBe(DEMO_API_KEY);
      expect(sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const client = new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey });
      expect((await client.getAccount()).data.balance.enabled).toBe(true);
    } finally {
      await sandbox.close();
    }
  });

  it('update() deep-merges into the running config and rejects an invalid patch whole', async () => {
    const { sandbox, client } = await setup({
      faults: { latency_ms: { min: 0, max: 0 }, download_cut: 0.5 },
    });
    sandbox.update({ faults: { http500_before_store: 1 } });
    expect(() => sandbox.update({ faults: { drop_before_store: 2 } })).toThrow(/faults\.drop_before_store/);
    await expect(client.createVideoJob(body('x'), newKey())).rejects.toMatchObject({ status: 500 });
    sandbox.update({ faults: { http500_before_store: 0 }, retry_after_seconds: 0.5 });
    const job = await client.createVideoJob(body('x'), newKey());
    expect((await client.getJob(job.data.id)).retryAfter).toBe(0.5);
  });
});
