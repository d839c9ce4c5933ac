import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  allPosts,
  expectMoneyAgrees,
  ledgerBudgetHighWater,
  manifestYaml,
  project,
  runAgainst,
  sandboxSpendHighWater,
  startTestSandbox,
} from '../../support/e2e.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

describe('mediabatch run: budget with POSTs in flight at once', () => {
  it('with per-item caps, only the reservations keep parallel submissions under the budget', async () => {
    // Eight slots and POSTs that take 400 ms to answer: every submission decision is made while the
    // earlier POSTs are still unanswered, so "spent" alone says 0 and would let all eight go out.
    // Each job costs 0.04 and reserves its cap 0.05; the budget 0.10 holds two reservations.
    const s = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '10', concurrency_limit: 8 }],
      faults: { latency_ms: { min: 400, max: 400 } },
    });
    sandbox = s;
    const head = manifestYaml('parallel', 'budget_usd: "0.10"\nmax_cost_usd: "0.05"\nconcurrency: 8\n');
    const p = project(
      'parallel',
      `${head}items:\n${ids.map((id) => `  - {id: ${id}, prompt: "shot ${id}"}\n`).join('')}`,
    );
    const run = await runAgainst(s, p, ['--json']);
    const posts = allPosts(s);
    expect(posts, 'POSTs sent under a budget of two reservations').toHaveLength(2);
    // The two went out together: the second arrived before the first could be answered.
    expect(posts[1]!.at - posts[0]!.at, 'ms between the two POSTs').toBeLessThan(400);
    expect(sandboxSpendHighWater(s, 'parallel'), 'highest net charge at the service').toBeLessThanOrEqual(
      100_000,
    );
    expect(ledgerBudgetHighWater(p)).toBeLessThanOrEqual(100_000);
    expect(run.code, run.stderr).toBe(1);
    expect(JSON.parse(run.stdout).totals).toMatchObject({
      done: 2,
      budget_exceeded: 6,
      spent_usd: '0.080000',
    });
    await expectMoneyAgrees(s, p, 'parallel');
  });
});
