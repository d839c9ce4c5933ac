import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, spawnCli } from '../../support/cli.js';
import {
  allPosts,
  checkSavedOutputs,
  cliEnv,
  type E2eProject,
  expectMoneyAgrees,
  jobsOfItem,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startClockedSandbox,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';
import { type KillProxy, startKillProxy } from '../faults/kill-proxy.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function newSandbox(): Promise<SandboxHandle> {
  const sandbox = await startTestSandbox({ running_seconds: { min: 0.6, max: 0.6 } });
  cleanup.push(() => sandbox.close());
  return sandbox;
}

function newProject(name: string, ids: string[], suffix: (id: string) => string = () => ''): E2eProject {
  const items = ids.map((id) => `  - {id: ${id}, prompt: "shot ${id}${suffix(id)}"}\n`).join('');
  const p = project(name, `${manifestYaml(name, 'concurrency: 2\n')}items:\n${items}`);
  cleanup.push(() => rmSync(p.dir, { recursive: true, force: true }));
  return p;
}

const importCli = (sandbox: SandboxHandle, p: E2eProject, extra: string[] = []) =>
  runCli(['import', p.manifest, ...extra], { cwd: p.dir, env: cliEnv(sandbox) });

/**
 * Runs until the third POST has been stored and charged by the service, then kills the runner
 * before that answer reaches it: the ledger holds one unanswered attempt whose job exists.
 */
async function killAtThirdAnswer(sandbox: SandboxHandle, proxy: KillProxy, p: E2eProject): Promise<void> {
  const run = spawnCli(['run', p.manifest, '--poll-interval', '0.05'], {
    cwd: p.dir,
    env: { ...cliEnv(sandbox), MEDIAGEN_BASE_URL: proxy.baseUrl },
  });
  proxy.arm({ point: 'answered', nth: 3, fire: () => run.child.kill('SIGKILL') });
  const result = await run.done;
  expect(result.signal, result.stderr).toBe('SIGKILL');
}

describe('mediabatch import: a lost ledger costs nothing', () => {
  it('adopts every job after the ledger is deleted mid-batch, unanswered POST included; run submits only the rest', async () => {
    // b runs until the test moves the sandbox's clock on, so the third POST (c's, once a has
    // ended) goes out alone while b still runs, however slow the machine.
    const clocked = await startClockedSandbox({ running_seconds: { min: 0.6, max: 0.6 } });
    const sandbox = clocked.sandbox;
    cleanup.push(() => sandbox.close());
    const proxy = await startKillProxy(sandbox.baseUrl);
    cleanup.push(() => proxy.close());
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const p = newProject('lost', ids, (id) => ({ a: ' [[run:0.3]]', b: ' [[run:60]]' })[id] ?? '');
    await killAtThirdAnswer(sandbox, proxy, p);
    const stored = sandbox.records().jobs.map((job) => String(job.metadata['mediabatch.item']));
    expect(stored).toEqual(['a', 'b', 'c']);
    clocked.advance(61);
    const unanswered = ledgerRows<{ item_id: string }>(
      p,
      "SELECT item_id FROM attempts WHERE state = 'prepared'",
    );
    expect(unanswered).toEqual([{ item_id: 'c' }]);
    rmSync(dirname(p.ledger), { recursive: true, force: true });

    const postsBefore = allPosts(sandbox).length;
    const imported = await importCli(sandbox, p);
    expect(imported.code, imported.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(postsBefore);
    for (const id of stored) expect(imported.stdout).toContain(jobsOfItem(sandbox, 'lost', id)[0]!.id);
    expect(imported.stdout).toMatch(/no job found: the next run submits it/);
    const afterImport = await statusJson(p);
    const states = new Map(afterImport.items.map((item) => [item.id, item.state]));
    expect(states.get('c')).toMatch(/^(in_flight|done)$/);
    expect(ids.filter((id) => !stored.includes(id)).map((id) => states.get(id))).toEqual([
      'pending',
      'pending',
    ]);
    await expectMoneyAgrees(sandbox, p, 'lost');

    const rerun = await runAgainst(sandbox, p, ['--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    // Only the two items never submitted went out again: one POST each, no double charge.
    const newPosts = allPosts(sandbox).slice(postsBefore);
    expect(newPosts).toHaveLength(2);
    expect(sandbox.records().jobs).toHaveLength(5);
    expect(checkSavedOutputs(sandbox, p, 'lost', ids).problems).toEqual([]);
    await expectMoneyAgrees(sandbox, p, 'lost');
  }, 60_000);

  it('run on a new ledger whose manifest has jobs on the service stops and points to import', async () => {
    const sandbox = await newSandbox();
    const p = newProject('again', ['a', 'b']);
    const first = await runAgainst(sandbox, p);
    expect(first.code, first.stderr).toBe(0);
    rmSync(dirname(p.ledger), { recursive: true, force: true });

    const postsBefore = allPosts(sandbox).length;
    const second = await runAgainst(sandbox, p);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(
      'the service already holds jobs of again from the last 48 hours (items a, b)',
    );
    expect(second.stderr).toContain(`mediabatch import ${p.manifest}`);
    expect(second.stderr).toContain('nothing was submitted');
    expect(allPosts(sandbox)).toHaveLength(postsBefore);

    const imported = await importCli(sandbox, p, ['--json']);
    expect(imported.code, imported.stderr).toBe(0);
    const summary = JSON.parse(imported.stdout) as {
      items: Array<{ id: string; state: string; files: string[] }>;
    };
    expect(summary.items.map((item) => [item.id, item.state, item.files.length])).toEqual([
      ['a', 'done', 1],
      ['b', 'done', 1],
    ]);
    const third = await runAgainst(sandbox, p);
    expect(third.code, third.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(postsBefore);
    expect(checkSavedOutputs(sandbox, p, 'again', ['a', 'b']).problems).toEqual([]);
  }, 60_000);

  it('refuses to import into a ledger that already records attempts, and rejects a bad --since', async () => {
    const sandbox = await newSandbox();
    const p = newProject('kept', ['a']);
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    const refused = await importCli(sandbox, p);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already records attempts of kept');
    const bad = await importCli(sandbox, p, ['--since', '3 weeks']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--since must be a duration such as 90m, 6h or 2d, got '3 weeks'");
  }, 30_000);
});
