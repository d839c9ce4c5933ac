import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { project, runAgainst, startTestSandbox, statusJson } from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const ids = 'abcdefghi'.split('');
const yaml = `version: 1\nname: opening\ninput: {seconds: 10, definition: 480p}\nbudget_usd: "0.90"\nmax_cost_usd: "0.50"\nitems:\n${ids
  .map((id) => `  - {id: ${id}, prompt: "shot ${id}"}`)
  .join('\n')}\n`;

/**
 * Issue 41, item 4: under a budget, before any price was seen, the run opened with
 * `Plan: 1 new, 8 skipped` and then completed 3 items: the plan spent each item's max_cost_usd as
 * if it were its price. Each reserves its $0.50 cap and spends its price ($0.20), so 3 fit.
 */
describe('the opening line under a budget', () => {
  it('gives the range the budget allows while no price is seen, and calls no item the run tries skipped', async () => {
    sandbox = await startTestSandbox();
    const p = project('opening', yaml);
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout);
    expect(planned.totals).toMatchObject({
      new: 9,
      to_submit: 1,
      budget_permitting: 8,
      blocked_by_budget: 0,
    });
    expect(planned.items[1].reason).toContain('sent if budget_usd still has its $0.50 max_cost_usd');

    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(1);
    const opening = run.stdout.split('\n')[0]!;
    expect(opening).toBe(planned.summary);
    expect(opening).toMatch(/^Plan: 9 new; budget_usd fits 1 to 9 of the 9 to submit/);
    expect(opening).not.toContain('skipped');
    const status = await statusJson(p);
    // Inside the range the opening line gave.
    expect(status.totals).toMatchObject({ done: 3, budget_exceeded: 6 });

    // Once a price is seen the plan is exact: what the run then does, and no range.
    const after = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    const exact = JSON.parse(after.stdout);
    expect(exact.totals).toMatchObject({ to_submit: 0, budget_permitting: 0, blocked_by_budget: 6 });
    expect(exact.summary).toMatch(
      /^Plan: nothing to submit, 6 beyond budget_usd, 3 unchanged|6 beyond budget_usd/,
    );
    expect(exact.summary).not.toContain('skipped');
  });
});
