import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { allPosts, project, runAgainst, startTestSandbox, statusJson } from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

/**
 * Issue 41, item 5: a budget that fits only some takes was spent item by item (every take of a,
 * none of c). It buys variant 1 of every item, then variant 2, and plan foresees the same order.
 * Takes cost $0.04 and each reserves its $0.05 cap.
 */
describe('variants under a budget', () => {
  it('buys one take of every item before a second of any, as plan says', async () => {
    sandbox = await startTestSandbox();
    const items = ['a', 'b', 'c']
      .map((id) => `  - {id: ${id}, prompt: "Shot ${id}, take {variant}"}`)
      .join('\n');
    const p = project(
      'breadth',
      `version: 1\nname: breadth\ninput: {seconds: 2, definition: 480p}\nvariants: 3\nmax_cost_usd: "0.05"\nbudget_usd: "0.20"\nitems:\n${items}\n`,
    );
    onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
    // One take first, so that plan knows the price: $0.16 is left.
    expect((await runAgainst(sandbox, p, ['--only', 'a.v1'])).code).toBe(0);

    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout) as {
      items: Array<{ id: string; plan: string }>;
      totals: Record<string, number>;
      warnings: string[];
    };
    const labels = Object.fromEntries(planned.items.map((item) => [item.id, item.plan]));
    expect(labels).toEqual({
      a: 'done',
      'a.v2': 'new',
      'a.v3': 'blocked_by_budget',
      b: 'new',
      'b.v2': 'blocked_by_budget',
      'b.v3': 'blocked_by_budget',
      c: 'new',
      'c.v2': 'blocked_by_budget',
      'c.v3': 'blocked_by_budget',
    });
    expect(planned.totals).toMatchObject({ to_submit: 3, blocked_by_budget: 5 });
    expect(planned.warnings).toContain(
      'budget_usd buys a variant at a time: variant 1 of every item first, then variant 2 of every item, and so on',
    );

    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(1);
    expect(allPosts(sandbox)).toHaveLength(4);
    const status = await statusJson(p);
    const states = Object.fromEntries(status.items.map((item) => [item.id, item.state]));
    // What plan said: variant 1 of every item, then a's second.
    for (const [id, label] of Object.entries(labels))
      expect(states[id], id).toBe(label === 'blocked_by_budget' ? 'budget_exceeded' : 'done');
  });
});
