import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  type E2eProject,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

function planOut(p: E2eProject, file: string) {
  return runCli(['plan', p.manifest, '--out', file], { cwd: p.dir, env: cliEnv(sandbox) });
}

const planOf = (p: E2eProject, file: string) =>
  JSON.parse(readFileSync(join(p.dir, file), 'utf8')) as {
    plan_sha256: string;
    manifest_sha256: string;
    total_at_most_usd: string;
    items: Array<{ id: string; plan: string; request_hash: string; expected_usd: string | null }>;
  };

/** Three items capped at $0.05 each (a 2 s 480p clip costs $0.04), a budget far above them. */
const MANIFEST = `${manifestYaml('approved', 'budget_usd: "10"\n')}items:
  - {id: a, prompt: "first", max_cost_usd: "0.05"}
  - {id: b, prompt: "second", max_cost_usd: "0.05"}
  - {id: c, prompt: "third [[fail:provider_unavailablex1]] [[no-refund]]", max_cost_usd: "0.05"}
`;

describe('approved plans: plan --out, then run --plan', () => {
  it('writes the same plan_sha256 for the same plan, and refuses a run after an edit before any request', async () => {
    sandbox = await startTestSandbox();
    const p = project('approved', MANIFEST);
    const first = await planOut(p, 'plan.json');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      /approved plan written to plan\.json: plan_sha256 [0-9a-f]{64}, at most \$0\.15/,
    );
    expect(first.stdout).toContain('--plan plan.json');
    const again = await planOut(p, 'again.json');
    expect(again.code).toBe(0);
    const plan = planOf(p, 'plan.json');
    expect(planOf(p, 'again.json').plan_sha256).toBe(plan.plan_sha256);
    expect(readFileSync(join(p.dir, 'again.json'), 'utf8')).toBe(
      readFileSync(join(p.dir, 'plan.json'), 'utf8'),
    );
    expect(plan.total_at_most_usd).toBe('0.150000');
    expect(plan.items.map((item) => [item.id, item.plan])).toEqual([
      ['a', 'new'],
      ['b', 'new'],
      ['c', 'new'],
    ]);
    expect(plan.items.every((item) => /^[0-9a-f]{64}$/.test(item.request_hash))).toBe(true);

    writeFileSync(p.manifest, MANIFEST.replace('"second"', '"second, at dusk"'));
    const seen = sandbox.records().requests.length;
    const refused = await runAgainst(sandbox, p, ['--plan', 'plan.json']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('items changed: b');
    expect(refused.stderr).toContain('plan.json');
    // Refused before any request: not even GET /account.
    expect(sandbox.records().requests).toHaveLength(seen);

    // A plan changed by hand is not an approved plan.
    writeFileSync(p.manifest, MANIFEST);
    const altered = readFileSync(join(p.dir, 'plan.json'), 'utf8').replace('"0.150000"', '"9.000000"');
    writeFileSync(join(p.dir, 'altered.json'), altered);
    const tampered = await runAgainst(sandbox, p, ['--plan', 'altered.json']);
    expect(tampered.code).toBe(2);
    expect(tampered.stderr).toContain('plan_sha256');
    expect(sandbox.records().requests).toHaveLength(seen);
    expect(allPosts(sandbox)).toEqual([]);
  });

  it('keeps the run within the approved total, whatever budget_usd allows', async () => {
    sandbox = await startTestSandbox();
    const p = project('approved', MANIFEST);
    expect((await planOut(p, 'plan.json')).code).toBe(0);
    const ran = await runAgainst(sandbox, p, ['--plan', 'plan.json', '--json']);
    // c's first job failed and was left charged ($0.04): its resubmission ($0.05 at most) would pass
    // the approved $0.15, so it is not sent, though the $10 budget would allow it.
    expect(ran.code).toBe(1);
    const status = await statusJson(p);
    expect(status.items.map((item) => [item.id, item.state])).toEqual([
      ['a', 'done'],
      ['b', 'done'],
      ['c', 'budget_exceeded'],
    ]);
    expect(status.totals.spent_usd).toBe('0.120000');
    expect(allPosts(sandbox)).toHaveLength(3);
    // The plan is spent: the ledger moved, so the same file is refused now.
    const rerun = await runAgainst(sandbox, p, ['--plan', 'plan.json']);
    expect(rerun.code).toBe(2);
    expect(rerun.stderr).toContain('the ledger moved since');
  });
});
