import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  attemptRows,
  checkSavedOutputs,
  cliEnv,
  expectRerunSendsNothing,
  filesBelow,
  killRunWhen,
  project,
  runAgainst,
  sandboxNetByItem,
  sandboxSpendHighWater,
  sha256File,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const ITEMS = ['a', 'b', 'c', 'd'];
/** Every ledger item of 4 items x 3 variants: the first keeps the id, the others are <id>.v<n>. */
const TAKES = ITEMS.flatMap((id) => [id, `${id}.v2`, `${id}.v3`]);

function variantsProject(name: string, extra = '') {
  const items = ITEMS.map((id) => `  - {id: ${id}, prompt: "Shot ${id}, take {variant}"}`).join('\n');
  const head = `version: 1\nname: ${name}\ninput: {seconds: 2, definition: 480p, seed: "{variant}"}\n`;
  const yaml = `${head}variants: 3\nmax_cost_usd: "0.05"\nconcurrency: 3\n${extra}items:\n${items}\n`;
  const p = project(name, yaml);
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  return p;
}

describe('mediabatch run: variants', () => {
  it('makes 4 items x 3 variants as 12 paid jobs and 12 verified files, {variant} in each request; a re-run sends nothing', async () => {
    sandbox = await startTestSandbox();
    const p = variantsProject('takes');
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(12);
    expect(checkSavedOutputs(sandbox, p, 'takes', TAKES).problems).toEqual([]);
    expect(filesBelow(p.outDir).filter((file) => file.endsWith('.mp4'))).toHaveLength(12);
    // N jobs with their own keys; {variant} reached the prompt and the seed of each request.
    const attempts = attemptRows(p);
    expect(new Set(attempts.map((row) => row.idempotency_key)).size).toBe(12);
    const sent = new Map(attempts.map((row) => [row.item_id, JSON.parse(row.request_body).input]));
    expect(sent.get('b')).toMatchObject({ prompt: 'Shot b, take 1', seed: 1 });
    expect(sent.get('b.v3')).toMatchObject({ prompt: 'Shot b, take 3', seed: 3 });
    await expectRerunSendsNothing(sandbox, p, 0);
    // A redo reaches one variant by its id: one new take, the earlier one kept beside it.
    const redo = await runAgainst(sandbox, p, ['--redo', 'b.v2']);
    expect(redo.code, redo.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(13);
    expect(existsSync(join(p.outDir, 'b.v2.take1.mp4'))).toBe(true);
  });

  it('raising variants later pays only for the new takes: the take already made is variant 1', async () => {
    sandbox = await startTestSandbox();
    const yaml = (extra: string) =>
      `version: 1\nname: more\ninput: {seconds: 2, definition: 480p}\n${extra}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`;
    const p = project('more', yaml(''));
    onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    const first = sha256File(join(p.outDir, 'a.mp4'));
    writeFileSync(p.manifest, yaml('variants: 2\n'));
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir, env: cliEnv(sandbox) });
    expect(JSON.parse(plan.stdout).totals).toMatchObject({ items: 4, new: 2, done: 2, to_submit: 2 });
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(4);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(first);
    expect(checkSavedOutputs(sandbox, p, 'more', ['a', 'a.v2', 'b', 'b.v2']).problems).toEqual([]);
  });

  it('killed with SIGKILL mid-run, a re-run leaves one charge per variant', async () => {
    sandbox = await startTestSandbox({ running_seconds: { min: 0.3, max: 0.6 } });
    const p = variantsProject('killed');
    await killRunWhen(sandbox, p, () => waitUntil(() => allPosts(sandbox).length >= 5, 15_000, 'five POSTs'));
    const again = await runAgainst(sandbox, p);
    expect(again.code, again.stderr).toBe(0);
    expect(checkSavedOutputs(sandbox, p, 'killed', TAKES).problems).toEqual([]);
    const net = sandboxNetByItem(sandbox, 'killed');
    expect([...net.keys()].sort()).toEqual([...TAKES].sort());
  });

  it('counts every variant in the budget: a budget that fits 7 takes stops at 7 and says so', async () => {
    sandbox = await startTestSandbox();
    // Jobs cost $0.04 and reserve $0.05: after 7, $0.02 is left, less than one reservation.
    const p = variantsProject('seven', 'budget_usd: "0.30"\n');
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir, env: cliEnv(sandbox) });
    // Before any price is seen, 6 of the 12 fit at their $0.05 cap and the others as their prices allow.
    expect(JSON.parse(plan.stdout).totals).toMatchObject({
      items: 12,
      to_submit: 6,
      budget_permitting: 6,
      blocked_by_budget: 0,
    });
    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/5 items? .*budget|budget.* 5 items?/i);
    expect(allPosts(sandbox)).toHaveLength(7);
    const again = await runAgainst(sandbox, p, ['--json']);
    expect(again.code).toBe(1);
    const report = JSON.parse(again.stdout) as { totals: Record<string, unknown> };
    expect(report.totals).toMatchObject({ done: 7, budget_exceeded: 5, spent_usd: '0.280000' });
    expect(allPosts(sandbox)).toHaveLength(7);
    expect(sandboxSpendHighWater(sandbox, 'seven')).toBeLessThanOrEqual(300_000);
  });
});
