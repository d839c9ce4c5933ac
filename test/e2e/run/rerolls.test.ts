import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readVideoFile } from '../../../src/downloads/video-facts.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  expectRerunSendsNothing,
  itemsById,
  jobsOfItem,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

/**
 * Re-rolls (docs/checks.md): a take that fails its check is bought again as a new take under a new
 * key, at most `rerolls` times per item, within budget_usd; every failed take stays on disk.
 */

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const checksOf = (p: ReturnType<typeof project>, itemId: string) =>
  ledgerRows<{ take: number; outcome: string }>(
    p,
    `SELECT a.take, t.outcome FROM take_checks t JOIN attempts a ON a.id = t.attempt_id
      WHERE a.item_id = ? ORDER BY a.id`,
    itemId,
  ).map((row) => [row.take, row.outcome]);

describe('mediabatch run: re-rolls of takes that fail their check', () => {
  it('re-rolls a take short once: the item ends done with the good take in place and the short one kept', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'reroll',
      `${manifestYaml('reroll', 'rerolls: 2\n')}items:
  - {id: once, prompt: "short once [[short-clipx1]]"}
  - {id: fine, prompt: "fine from the start"}
`,
    );
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    expect((await statusJson(p)).items.find((item) => item.id === 'once')).toMatchObject({
      state: 'done',
      error: null,
      attempts: 2,
    });
    expect(run.stdout + run.stderr).toMatch(
      /once: take 1 failed its check: 1 s long, 2 s asked for .*buying it again \(re-roll 1 of 2\)/,
    );
    const jobs = jobsOfItem(sandbox, 'reroll', 'once');
    expect(jobs.map((job) => job.status)).toEqual(['succeeded', 'succeeded']);
    expect(new Set(jobs.map((job) => job.idempotencyKey)).size).toBe(2);
    expect(jobsOfItem(sandbox, 'reroll', 'fine')).toHaveLength(1);
    expect(checksOf(p, 'once')).toEqual([
      [1, 'failed'],
      [2, 'passed'],
    ]);
    // The good take holds the item's name; the short one is kept as take 1.
    expect(await readVideoFile(join(p.outDir, 'once.mp4'))).toMatchObject({ seconds: 2 });
    expect(await readVideoFile(join(p.outDir, 'once.take1.mp4'))).toMatchObject({ seconds: 1 });
    // export gives each take's check: the good one's, and the short earlier take's.
    const exported = await runCli(['export', p.manifest, '--state', 'done'], { cwd: p.dir });
    const once = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((record) => record.id === 'once');
    expect(once).toMatchObject({
      take: 2,
      check: { outcome: 'passed', reason: null },
      earlier_takes: [
        { take: 1, check: { outcome: 'failed', reason: '1 s long, 2 s asked for (within 0.5 s)' } },
      ],
    });
    await expectRerunSendsNothing(sandbox, p, 0);
  }, 60_000);

  it('an item always short ends checks_failed after its re-rolls, every take kept; a re-run buys nothing', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'always',
      `${manifestYaml('always', 'rerolls: 1\n')}items:
  - {id: short, prompt: "always short [[short-clip]]", rerolls: 2}
  - {id: other, prompt: "a good one"}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code, run.stderr).toBe(1);
    expect(itemsById(run.stdout).get('short')).toMatchObject({
      state: 'checks_failed',
      attempts: 3,
      error: { code: 'checks_failed', message: '1 s long, 2 s asked for (within 0.5 s)' },
    });
    expect(JSON.parse(run.stdout).totals).toMatchObject({ done: 1, checks_failed: 1 });
    expect(jobsOfItem(sandbox, 'always', 'short')).toHaveLength(3);
    expect(checksOf(p, 'short')).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'failed'],
    ]);
    expect(
      readdirSync(p.outDir)
        .filter((name) => name.startsWith('short'))
        .sort(),
    ).toEqual([
      'short.json',
      'short.mp4',
      'short.take1.json',
      'short.take1.mp4',
      'short.take2.json',
      'short.take2.mp4',
    ]);
    await expectRerunSendsNothing(sandbox, p, 1);
  }, 60_000);

  it('never passes budget_usd for a re-roll, and plan counts re-rolls in its "at most"', async () => {
    sandbox = await startTestSandbox();
    // 2 s at 480p is $0.04 a job, capped at $0.04: $0.10 fits two jobs, not the third.
    const p = project(
      'tight',
      `${manifestYaml('tight', 'rerolls: 3\nbudget_usd: "0.10"\nmax_cost_usd: "0.04"\n')}items:
  - {id: short, prompt: "always short [[short-clip]]"}
`,
    );
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir, env: cliEnv(sandbox) });
    expect(plan.code, plan.stderr).toBe(0);
    // One take and three re-rolls at their cap, bounded by the budget.
    expect(JSON.parse(plan.stdout).totals.at_most_usd).toBe('0.100000');
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1);
    const status = await statusJson(p);
    expect(status.items[0]).toMatchObject({ state: 'checks_failed', attempts: 2 });
    expect(run.stdout + run.stderr).toMatch(/short: the re-roll .*budget_usd/);
    expect(allPosts(sandbox)).toHaveLength(2);
    expect(status.totals.spent_usd).toBe('0.080000');
  }, 60_000);
});
