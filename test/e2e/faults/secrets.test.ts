import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { type CliResult, runCli } from '../../support/cli.js';
import { type E2eProject, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { expectNoStackTrace, filesUnder, itemsYaml } from './support.js';

const SENTINEL = 'mg_SENTINEL_5f3a9c0d2e7b41a8_good';
const SENTINEL_BROKE = 'mg_SENTINEL_5f3a9c0d2e7b41a8_broke';
const SENTINEL_WRONG = 'mg_SENTINEL_5f3a9c0d2e7b41a8_wrong';
const SECRETS = [SENTINEL, SENTINEL_BROKE, SENTINEL_WRONG, 'SENTINEL_5f3a9c0d2e7b41a8'];
/** The sandbox signs output URLs with `expires=..&sig=..` (src/sandbox/signing.ts). */
const SIGNED_QUERY = /[?&](sig|expires)=/;

let sandbox: SandboxHandle;
const outputs: Array<{ label: string; result: CliResult }> = [];
const projects: E2eProject[] = [];

beforeAll(async () => {
  sandbox = await startTestSandbox({
    keys: [
      { key: SENTINEL, id: 1, workspace: 'ws_test' },
      { key: SENTINEL_BROKE, id: 2, workspace: 'ws_broke' },
    ],
    workspaces: [
      { id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 3 },
      { id: 'ws_broke', balance_usd: '1000.00', wallet_enabled: false, concurrency_limit: 3 },
    ],
  });
});
afterAll(() => sandbox.close());

function newProject(name: string, prompts: Record<string, string>, files: Record<string, string> = {}) {
  const p = project(
    name,
    `${manifestYaml(name)}${itemsYaml(Object.keys(prompts), (id) => prompts[id]!)}`,
    files,
  );
  projects.push(p);
  return p;
}

/** Runs the CLI in `p` with `key` and keeps its output for the final sweep. */
async function cli(
  label: string,
  p: E2eProject,
  args: string[],
  key = SENTINEL,
  extraEnv = {},
): Promise<CliResult> {
  const result = await runCli(args, {
    cwd: p.dir,
    env: { MEDIAGEN_API_KEY: key, MEDIAGEN_BASE_URL: sandbox.baseUrl, ...extraEnv },
  });
  outputs.push({ label, result });
  expectNoStackTrace(result);
  return result;
}

const run = (label: string, p: E2eProject, key = SENTINEL, extra: string[] = []) =>
  cli(label, p, ['run', p.manifest, '--poll-interval', '0.1', ...extra], key);

describe('the API key and signed URLs never leak', () => {
  it('success, 500s and dropped connections, cut downloads: plain and --json', async () => {
    const ok = newProject('ok', { a: 'first', b: 'second' });
    expect((await run('success', ok)).code).toBe(0);
    const flaky = newProject('flaky', {
      a: 'x [[500-beforex2]]',
      b: 'y [[500-afterx1]]',
      c: 'z [[drop-beforex1]]',
      d: 'w [[drop-afterx1]]',
      e: 'v [[cut-downloadx2]]',
    });
    const flakyRun = await run('500/drop/cut', flaky);
    expect(flakyRun.code).toBe(0);
    expect(flakyRun.stdout).toMatch(/no answer from the service/);
    const cut = newProject('cut', { a: 'u [[cut-downloadx3]]' });
    expect((await run('cut --json', cut, SENTINEL, ['--json'])).code).toBe(0);
  }, 60_000);

  it('401 (wrong key) and 402 (wallet disabled): exit 3, plain and --json', async () => {
    const wrong = newProject('wrong', { a: 'first' });
    expect((await run('401', wrong, SENTINEL_WRONG)).code).toBe(3);
    expect((await run('401 --json', wrong, SENTINEL_WRONG, ['--json'])).code).toBe(3);
    const broke = newProject('broke', { a: 'first' });
    const refused = await run('402', broke, SENTINEL_BROKE);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toMatch(/wallet_not_enabled/);
    expect((await run('402 --json', broke, SENTINEL_BROKE, ['--json'])).code).toBe(3);
  }, 60_000);

  it('a bad manifest, a bad flag, plan, status and report (text and HTML)', async () => {
    const bad = newProject('bad', { a: 'first' });
    expect((await cli('missing manifest', bad, ['run', 'nope.yaml'])).code).toBe(2);
    const broken = newProject('broken', { a: 'first' });
    writeFileSync(broken.manifest, 'version: 1\nname: broken\nitems: [{prompt: x, seconds: "6"}\n');
    expect((await cli('broken manifest', broken, ['run', broken.manifest])).code).toBe(2);
    expect((await cli('unknown flag', bad, ['run', bad.manifest, `--api-key=${SENTINEL}`])).code).toBe(2);

    const ok = projects.find((p) => p.ledger.endsWith('/ok.sqlite'))!;
    expect((await cli('plan', ok, ['plan', ok.manifest, '--base-url', sandbox.baseUrl])).code).toBe(0);
    expect((await cli('plan --json', ok, ['plan', ok.manifest, '--json'])).code).toBe(0);
    expect(
      (await cli('plan 401', ok, ['plan', ok.manifest, '--base-url', sandbox.baseUrl], SENTINEL_WRONG)).code,
    ).toBe(3);
    expect((await cli('status', ok, ['status', ok.manifest])).code).toBe(0);
    expect((await cli('status --json', ok, ['status', ok.manifest, '--json'])).code).toBe(0);
    expect((await cli('report', ok, ['report', ok.manifest])).code).toBe(0);
    const html = await cli('report --html', ok, [
      'report',
      ok.manifest,
      '--html',
      join(ok.dir, 'report.html'),
    ]);
    expect(html.code).toBe(0);
    expect(readFileSync(join(ok.dir, 'report.html'), 'utf8')).toContain('<html');
  }, 60_000);

  it('sweep: no secret in any stdout, stderr or file written under a project (ledger, -wal, outputs, reports)', () => {
    expect(outputs.length).toBeGreaterThanOrEqual(17);
    for (const { label, result } of outputs) {
      const text = result.stdout + result.stderr;
      for (const secret of SECRETS) expect(text.includes(secret), `${label} printed the key`).toBe(false);
      expect(text, `${label} printed a signed URL`).not.toMatch(SIGNED_QUERY);
    }
    let swept = 0;
    for (const p of projects) {
      for (const file of filesUnder(p.dir)) {
        const bytes = readFileSync(file);
        swept += 1;
        for (const secret of SECRETS) expect(bytes.includes(secret), `${file} holds the key`).toBe(false);
        expect(SIGNED_QUERY.test(bytes.toString('latin1')), `${file} holds a signed URL`).toBe(false);
      }
    }
    const ledgers = projects
      .flatMap((p) => filesUnder(p.dir))
      .filter((file) => /\.sqlite(-wal|-shm)?$/.test(file));
    expect(ledgers.length).toBeGreaterThanOrEqual(5);
    expect(swept).toBeGreaterThan(10);
  });
});
