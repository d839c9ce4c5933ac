import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  attemptRows,
  expectMoneyAgrees,
  itemsById,
  jobsOfItem,
  ledgerBudgetHighWater,
  manifestYaml,
  postsWithKeys,
  project,
  runAgainst,
  sandboxMoney,
  sandboxSpendHighWater,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

function netSpent(name: string): number {
  const money = sandboxMoney(sandbox, name);
  return money.chargedMicros - money.refundedMicros;
}

const items = (ids: string[], prompt = (id: string) => `shot ${id}`) =>
  `items:\n${ids.map((id) => `  - {id: ${id}, prompt: "${prompt(id)}"}`).join('\n')}\n`;

describe('mediabatch run: budget_usd', () => {
  it('with per-item caps stops at the budget and a raised budget resumes (parallel reservations: budget-parallel.test.ts)', async () => {
    sandbox = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '10', concurrency_limit: 5 }],
    });
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const head = (budget: string) =>
      manifestYaml('capped', `budget_usd: "${budget}"\nmax_cost_usd: "0.05"\nconcurrency: 3\n`);
    const p = project('capped', `${head('0.20')}${items(ids)}`);
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    // Each job costs 0.04 and reserves 0.05: after four, 0.04 is left, less than one reservation.
    expect(report.totals).toMatchObject({ done: 4, budget_exceeded: 2, spent_usd: '0.160000' });
    const byId = itemsById(run.stdout);
    for (const id of ['e', 'f']) {
      expect(byId.get(id)).toMatchObject({
        state: 'budget_exceeded',
        attempts: 0,
        error: { code: 'budget_exceeded' },
      });
    }
    expect(ledgerBudgetHighWater(p)).toBeLessThanOrEqual(200_000);
    expect(sandboxSpendHighWater(sandbox, 'capped')).toBeLessThanOrEqual(200_000);
    expect(netSpent('capped')).toBe(160_000);
    for (const row of attemptRows(p)) expect(JSON.parse(row.request_body).max_cost_usd).toBe('0.050000');
    await expectMoneyAgrees(sandbox, p, 'capped');

    // Raising the budget submits exactly the items that did not fit, and nothing else.
    writeFileSync(p.manifest, `${head('0.30')}${items(ids)}`);
    const posts = allPosts(sandbox).length;
    const again = await runAgainst(sandbox, p, ['--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).totals).toMatchObject({ done: 6, spent_usd: '0.240000' });
    expect(allPosts(sandbox)).toHaveLength(posts + 2);
    for (const id of ids) expect(jobsOfItem(sandbox, 'capped', id)).toHaveLength(1);
    expect(ledgerBudgetHighWater(p)).toBeLessThanOrEqual(300_000);
    await expectMoneyAgrees(sandbox, p, 'capped');
  });

  it('without caps sends the remaining budget as max_cost_usd and ends items that no longer fit', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'uncapped',
      `${manifestYaml('uncapped', 'budget_usd: "0.10"\n')}${items(['a', 'b', 'c'])}`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const byId = itemsById(run.stdout);
    expect(byId.get('a')).toMatchObject({ state: 'done' });
    expect(byId.get('b')).toMatchObject({ state: 'done' });
    expect(byId.get('c')).toMatchObject({ state: 'budget_exceeded', error: { code: 'budget_exceeded' } });
    const rows = attemptRows(p);
    // One request at a time, each capped by what was left: 0.10, then 0.10 - 0.04, then 0.06 - 0.04.
    expect(rows.map((row) => [row.item_id, JSON.parse(row.request_body).max_cost_usd])).toEqual([
      ['a', '0.100000'],
      ['b', '0.060000'],
      ['c', '0.020000'],
    ]);
    expect(rows[2]).toMatchObject({ state: 'rejected', http_status: 400, http_code: 'max_cost_exceeded' });
    // The price is learnt once: the 400 is not sent again and again while nothing frees budget.
    expect(postsWithKeys(sandbox, [rows[2]!.idempotency_key]).map((request) => request.status)).toEqual([
      400,
    ]);
    expect(allPosts(sandbox)).toHaveLength(3);
    expect(netSpent('uncapped')).toBe(80_000);
    expect(ledgerBudgetHighWater(p)).toBeLessThanOrEqual(100_000);
    expect(sandboxSpendHighWater(sandbox, 'uncapped')).toBeLessThanOrEqual(100_000);
    await expectMoneyAgrees(sandbox, p, 'uncapped');
  });

  it('lets a refund free budget for an item waiting in the same run', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'refunded',
      `${manifestYaml('refunded', 'budget_usd: "0.08"\nmax_cost_usd: "0.04"\n')}items:
  - {id: rejected, prompt: "r [[fail:content_rejected]]"}
  - {id: b, prompt: second}
  - {id: c, prompt: third}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const byId = itemsById(run.stdout);
    expect(byId.get('rejected')).toMatchObject({ state: 'failed', error: { code: 'content_rejected' } });
    expect(byId.get('b')).toMatchObject({ state: 'done' });
    expect(byId.get('c')).toMatchObject({ state: 'done' });
    const [rejected] = jobsOfItem(sandbox, 'refunded', 'rejected');
    const [c] = jobsOfItem(sandbox, 'refunded', 'c');
    // c only fitted once the rejected job's charge came back.
    expect(Date.parse(c!.createdAt)).toBeGreaterThanOrEqual(Date.parse(rejected!.completedAt!));
    expect(netSpent('refunded')).toBe(80_000);
    expect(ledgerBudgetHighWater(p)).toBeLessThanOrEqual(80_000);
    expect(sandboxSpendHighWater(sandbox, 'refunded')).toBeLessThanOrEqual(80_000);
    await expectMoneyAgrees(sandbox, p, 'refunded');
  });

  it('lets a refund free budget for an uncapped item that was refused as too expensive', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'uncapped-refund',
      `${manifestYaml('uncapped-refund', 'budget_usd: "0.06"\n')}items:
  - {id: rejected, prompt: "r [[fail:content_rejected]] [[run:1]]"}
  - {id: b, prompt: second}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code).toBe(1);
    const byId = itemsById(run.stdout);
    expect(byId.get('rejected')).toMatchObject({ state: 'failed', error: { code: 'content_rejected' } });
    expect(byId.get('b')).toMatchObject({ state: 'done' });
    const rows = attemptRows(p).filter((row) => row.item_id === 'b');
    // First refused at what was left (0.02) while the other job held 0.04, then sent with 0.06.
    expect(rows.map((row) => [JSON.parse(row.request_body).max_cost_usd, row.state])).toEqual([
      ['0.020000', 'rejected'],
      ['0.060000', 'accepted'],
    ]);
    expect(allPosts(sandbox)).toHaveLength(3);
    expect(ledgerBudgetHighWater(p)).toBeLessThanOrEqual(60_000);
    await expectMoneyAgrees(sandbox, p, 'uncapped-refund');
  });
});

describe('mediabatch plan and run: the words and count of a budget refusal', () => {
  it('at the max_cost_usd cap, plan counts what the run then does, and both name the cap, the prices and both fixes', async () => {
    sandbox = await startTestSandbox();
    // Ten seconds at 480p cost $0.20; each item reserves its $0.50 cap before it is sent.
    const ids = 'abcdefghijklmn'.split('');
    const yaml = `version: 1\nname: capped-words\ninput: {seconds: 10, definition: 480p}\nbudget_usd: "1.30"\nmax_cost_usd: "0.50"\n${items(ids)}`;
    const p = project('capped-words', yaml);
    // One item first, so that a price is seen: $1.10 is left after it.
    expect((await runAgainst(sandbox, p, ['--only', 'a'])).code).toBe(0);

    const words =
      'reserves its max_cost_usd cap of $0.50 but $0.30 is left of budget_usd (prices seen $0.20): ' +
      'raise budget_usd, or lower max_cost_usd to about $0.20, the prices seen (the cheaper fix)';
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout);
    // $1.10, $0.90, $0.70, $0.50 each hold a $0.50 reservation; then $0.30 is left.
    expect(planned.totals).toMatchObject({ new: 4, blocked_by_budget: 9, to_submit: 4 });
    expect(planned.warnings).toContain(`9 items will not fit in budget_usd; the first, f, ${words}`);
    expect(planned.items.find((item: { id: string }) => item.id === 'n').reason).toBe(words);

    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain(
      `9 items did not fit in budget_usd; the first, f, ${words}; then re-run. A lowered max_cost_usd sends no done item again (plan then says of each: only max_cost_usd changed: the same video, not paid for again).`,
    );
    const status = await statusJson(p);
    // The run did what plan counted: the four it said fit, and the nine it said would not.
    expect(status.totals).toMatchObject({ done: 1 + planned.totals.to_submit, budget_exceeded: 9 });
    expect(status.totals.budget_exceeded).toBe(planned.totals.blocked_by_budget);
    for (const id of ids.slice(5)) {
      expect(status.items.find((item) => item.id === id)).toMatchObject({
        state: 'budget_exceeded',
        attempts: 0,
        error: { code: 'budget_exceeded', message: words },
      });
    }
    const shown = await runCli(['status', p.manifest], { cwd: p.dir });
    expect(shown.stdout).toContain(`budget_exceeded: ${words}`);
    // Never more than the budget at the sandbox, in flight or in the end; every request capped at $0.50.
    expect(sandboxSpendHighWater(sandbox, 'capped-words')).toBeLessThanOrEqual(1_300_000);
    expect(ledgerBudgetHighWater(p)).toBeLessThanOrEqual(1_300_000);
    expect(netSpent('capped-words')).toBe(1_000_000);
    for (const row of attemptRows(p)) expect(JSON.parse(row.request_body).max_cost_usd).toBe('0.500000');
    await expectMoneyAgrees(sandbox, p, 'capped-words');
  });
});
