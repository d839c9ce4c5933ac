import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { jobsOfItem, project, runAgainst, startTestSandbox, statusJson } from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const ids = 'abcdefg'.split('');
const manifest = (cap: string) =>
  `version: 1\nname: advice\ninput: {seconds: 10, definition: 480p}\nbudget_usd: "1.30"\nmax_cost_usd: "${cap}"\nitems:\n${ids
    .map((id) => `  - {id: ${id}, prompt: "shot ${id}"}`)
    .join('\n')}\n`;

/**
 * Issue 41, item 2: after a budget stop the run advised lowering max_cost_usd but warned "a done
 * item whose max_cost_usd changes is generated again", while plan, once the cap was lowered, said
 * of those very items "only max_cost_usd changed: the same video, not paid for again". The run's
 * advice, status's item words and plan's reasons are compared here, and the advice is followed.
 */
describe('the advice after a budget stop', () => {
  it('says what plan then says of the done items, and following it pays for no done item again', async () => {
    sandbox = await startTestSandbox();
    // $0.20 a video, each reserving its $0.50 cap: a first, then four more fit, f and g do not.
    const p = project('advice', manifest('0.50'));
    expect((await runAgainst(sandbox, p, ['--only', 'a'])).code).toBe(0);
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1);
    const advice = run.stdout.split('\n').find((line) => line.includes('did not fit in budget_usd'));
    expect(advice).toBeDefined();
    expect(advice).toContain('lower max_cost_usd to about $0.20');
    expect(advice).not.toContain('generated again');

    // status gives the first item's own words, the same as the run's line.
    const status = await statusJson(p);
    const f = status.items.find((item) => item.id === 'f')!;
    expect(f.state).toBe('budget_exceeded');
    expect(advice).toContain(`the first, f, ${f.error!.message}`);

    // The advice followed: plan's reason for every done item is in the run's words.
    writeFileSync(p.manifest, manifest('0.20'));
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout) as {
      items: Array<{ id: string; plan: string; reason?: string }>;
    };
    const done = planned.items.filter((item) => item.plan === 'done');
    expect(done.map((item) => item.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    for (const item of done) {
      expect(item.reason).toBeDefined();
      expect(advice).toContain(item.reason);
    }
    const jobsOf = (id: string) => jobsOfItem(sandbox, 'advice', id).length;
    const before = ids.map(jobsOf);
    // $0.30 is left: f fits at its lowered cap, g still does not.
    const again = await runAgainst(sandbox, p);
    expect(again.code, again.stdout + again.stderr).toBe(1);
    // The done items kept their videos: only f was sent.
    expect(ids.map(jobsOf)).toEqual(before.map((count, index) => (ids[index] === 'f' ? count + 1 : count)));
  });
});
