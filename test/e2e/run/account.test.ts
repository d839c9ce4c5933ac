import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import type { CliResult } from '../../support/cli.js';
import {
  allPosts,
  type E2eProject,
  expectMoneyAgrees,
  jobsOfItem,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

const KEY = 'mg_test_key_000000000000';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

/** The key is in the child's environment only: never on its output, never in the ledger's files. */
function expectKeyNowhere(p: E2eProject, key: string, ...results: CliResult[]): void {
  for (const result of results) {
    expect(result.stdout).not.toContain(key);
    expect(result.stderr).not.toContain(key);
  }
  const folder = dirname(p.ledger);
  if (!existsSync(folder)) return;
  for (const name of readdirSync(folder)) {
    expect(readFileSync(join(folder, name)).includes(key), `${name} holds the key`).toBe(false);
  }
}

const fiveItems = `items:\n${['a', 'b', 'c', 'd', 'e'].map((id) => `  - {id: ${id}, prompt: "shot ${id}"}`).join('\n')}\n`;

describe('mediabatch run: the service refuses the account', () => {
  it('exits 3 on a bad key (401) and submits nothing', async () => {
    sandbox = await startTestSandbox();
    const p = project('badkey', `${manifestYaml('badkey')}${fiveItems}`);
    const wrong = 'mg_wrong_key_1234567890';
    // Refused before anything is recorded: an error, no document, and no ledger left behind.
    const json = await runAgainst(sandbox, p, ['--json'], { MEDIAGEN_API_KEY: wrong });
    expect(json.code).toBe(3);
    expect(json.stdout).toBe('');
    expect(json.stderr).toContain('invalid_api_key');
    const plain = await runAgainst(sandbox, p, [], { MEDIAGEN_API_KEY: wrong });
    expect(plain.code).toBe(3);
    expect(plain.stderr).toContain('invalid_api_key');
    expect(existsSync(p.ledger)).toBe(false);
    expect(allPosts(sandbox)).toHaveLength(0);
    expect(sandbox.records().requests.every((request) => request.status === 401)).toBe(true);
    expect(sandbox.records().jobs).toHaveLength(0);
    expectKeyNowhere(p, wrong, json, plain);
  });

  it('exits 3 when the wallet is disabled (402), creates no job, and a re-run resumes once enabled', async () => {
    sandbox = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '10', wallet_enabled: false, concurrency_limit: 3 }],
    });
    const p = project('nowallet', `${manifestYaml('nowallet')}${fiveItems}`);
    const refused = await runAgainst(sandbox, p, ['--json']);
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.stdout).totals).toMatchObject({
      items: 5,
      pending: 5,
      done: 0,
      spent_usd: '0.000000',
    });
    const posts = allPosts(sandbox);
    // Only what was already under way when the first 402 came back; then no new submission.
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.length).toBeLessThanOrEqual(3);
    expect(posts.every((request) => request.status === 402)).toBe(true);
    expect(sandbox.records().jobs).toHaveLength(0);
    await expectMoneyAgrees(sandbox, p, 'nowallet');

    sandbox.update({
      workspaces: [{ id: 'ws_test', balance_usd: '10', wallet_enabled: true, concurrency_limit: 3 }],
    });
    const resumed = await runAgainst(sandbox, p, ['--json']);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).totals).toMatchObject({ done: 5, spent_usd: '0.200000' });
    for (const id of ['a', 'b', 'c', 'd', 'e']) expect(jobsOfItem(sandbox, 'nowallet', id)).toHaveLength(1);
    await expectMoneyAgrees(sandbox, p, 'nowallet');
    expectKeyNowhere(p, KEY, refused, resumed);
  });

  it('on insufficient balance stops submitting but still watches and saves what is in flight', async () => {
    // Enough for exactly two 0.04 jobs.
    sandbox = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '0.08', concurrency_limit: 3 }],
    });
    const p = project('broke', `${manifestYaml('broke')}${fiveItems}`);
    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('insufficient_balance');
    const posts = allPosts(sandbox);
    expect(posts.map((request) => request.status).sort()).toEqual([202, 202, 402]);
    const refusedAt = sandbox.records().requests.findIndex((request) => request.status === 402);
    expect(
      sandbox
        .records()
        .requests.slice(refusedAt + 1)
        .some((request) => request.method === 'POST'),
    ).toBe(false);

    const items = new Map((await statusJson(p)).items.map((item) => [item.id, item]));
    const done = [...items.values()].filter((item) => item.state === 'done');
    expect(done).toHaveLength(2);
    expect([...items.values()].filter((item) => item.state === 'pending')).toHaveLength(3);
    for (const item of done) {
      const [job] = jobsOfItem(sandbox, 'broke', item.id);
      const bytes = readFileSync(join(p.dir, item.files[0]!));
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(job!.files[0]!.sha256);
    }
    expect(sandbox.records().jobs).toHaveLength(2);
    expect(sandbox.account().balanceMicros).toBe(0);
    await expectMoneyAgrees(sandbox, p, 'broke');

    // A top-up lets a re-run submit the rest; the two finished items are not paid again.
    sandbox.update({ workspaces: [{ id: 'ws_test', balance_usd: '1', concurrency_limit: 3 }] });
    const resumed = await runAgainst(sandbox, p, ['--json']);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).totals).toMatchObject({ done: 5, spent_usd: '0.200000' });
    expect(sandbox.records().jobs).toHaveLength(5);
    await expectMoneyAgrees(sandbox, p, 'broke');
    expectKeyNowhere(p, KEY, run, resumed);
  });
});
