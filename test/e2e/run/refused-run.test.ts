import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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
  statusJson,
} from '../../support/e2e.js';

/**
 * A refused run changes nothing (docs/results.md, "What only an option pays for"): an item a run
 * was asked to pay for again but never sent stays as the ledger had it, so a plain run after it
 * pays for nothing, and `plan` and `status` say which option would.
 */

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const cli = (sandbox: SandboxHandle, p: E2eProject, args: string[]) =>
  runCli([args[0]!, p.manifest, ...args.slice(1)], { cwd: p.dir, env: cliEnv(sandbox) });

interface Listed {
  items: Array<{ id: string; state?: string; plan?: string; paid_only_by?: string }>;
  totals: { to_submit?: number };
}

async function json(sandbox: SandboxHandle, p: E2eProject, args: string[]): Promise<Listed> {
  const result = await cli(sandbox, p, [...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Listed;
}

/**
 * Two items run, their outputs expired at the service, the ledger lost and rebuilt by import
 * with the sidecars gone: the items are expired and their files are strangers in their way.
 */
async function expiredBehindStrangers(sandbox: SandboxHandle): Promise<E2eProject> {
  const p = project(
    'blocked',
    `${manifestYaml('blocked')}items:\n  - {id: a, prompt: p a}\n  - {id: b, prompt: p b}\n`,
  );
  cleanup.push(() => rmSync(p.dir, { recursive: true, force: true }));
  expect((await runAgainst(sandbox, p)).code).toBe(0);
  const [row] = ledgerRows<{ last: string }>(p, 'SELECT MAX(expires_at) AS last FROM attempts');
  const wait = Date.parse(row!.last) - Date.now() + 300;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  rmSync(dirname(p.ledger), { recursive: true, force: true });
  for (const name of readdirSync(p.outDir)) if (name.endsWith('.json')) rmSync(join(p.outDir, name));
  expect((await cli(sandbox, p, ['import'])).code).toBe(0);
  return p;
}

describe('a run blocked before it sends an item leaves the item as it was', () => {
  it('run --regenerate-expired blocked by foreign files: items stay expired; a plain run then pays nothing', async () => {
    const sandbox = await startTestSandbox({ retention_seconds: 2 });
    cleanup.push(() => sandbox.close());
    const p = await expiredBehindStrangers(sandbox);
    expect((await statusJson(p)).items.map((item) => item.state)).toEqual(['expired', 'expired']);
    const posts = allPosts(sandbox).length;

    const blocked = await runAgainst(sandbox, p, ['--regenerate-expired']);
    expect(blocked.stdout + blocked.stderr).toMatch(/a: not submitted: out\/blocked\/a\.mp4 is in the way/);
    expect(blocked.code).toBe(1);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect((await statusJson(p)).items.map((item) => item.state)).toEqual(['expired', 'expired']);

    // The files moved aside, as the words say: a plain run still pays for nothing.
    mkdirSync(join(p.dir, 'aside'));
    for (const name of readdirSync(p.outDir))
      if (name.endsWith('.mp4')) renameSync(join(p.outDir, name), join(p.dir, 'aside', name));
    const plain = await runAgainst(sandbox, p);
    expect(plain.code, plain.stderr).toBe(1);
    expect(allPosts(sandbox)).toHaveLength(posts);
    const status = await json(sandbox, p, ['status']);
    expect(status.items.map((item) => [item.state, item.paid_only_by])).toEqual([
      ['expired', 'regenerateExpired'],
      ['expired', 'regenerateExpired'],
    ]);
    const statusText = await cli(sandbox, p, ['status']);
    expect(statusText.stdout).toContain('only run --regenerate-expired pays for these again: a, b');

    const plan = await json(sandbox, p, ['plan']);
    expect(plan.totals.to_submit).toBe(0);
    expect(plan.items.map((item) => [item.plan, item.paid_only_by])).toEqual([
      ['expired', 'regenerateExpired'],
      ['expired', 'regenerateExpired'],
    ]);
    const planText = await cli(sandbox, p, ['plan']);
    expect(planText.stdout).toContain('only run --regenerate-expired pays for these again: a, b');
    expect((await json(sandbox, p, ['plan', '--regenerate-expired'])).totals.to_submit).toBe(2);

    const paid = await runAgainst(sandbox, p, ['--regenerate-expired']);
    expect(paid.code, paid.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts + 2);
  }, 60_000);
});
