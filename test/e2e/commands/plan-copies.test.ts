import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { manifestYaml } from '../../support/e2e.js';

/**
 * Items of one manifest asking for the very same request are generated once and copied: on a
 * ledger that never ran, `plan` says they are copies of so many distinct requests, not results
 * "found already paid for", and warns when the copies outnumber the requests (a repeated prompt
 * most likely meant several different videos).
 */
const items = (count: number, distinct: number) =>
  `items:\n${Array.from({ length: count }, (_, i) => `  - {id: shot-${i}, prompt: "take ${i % distinct}"}\n`).join('')}`;

async function plan(yaml: string, ...flags: string[]) {
  const dir = tempProject({ 'batch.yaml': yaml });
  const result = await runCli(['plan', 'batch.yaml', ...flags], { cwd: dir });
  expect(existsSync(join(dir, '.mediabatch')), 'plan creates no ledger').toBe(false);
  return result;
}

describe('plan of repeated requests on a ledger that never ran', () => {
  it('40 items of 8 distinct prompts: 8 new, 32 copies of 8 distinct requests, and a warning', async () => {
    const result = await plan(`${manifestYaml('repeats', 'max_cost_usd: "0.10"\n')}${items(40, 8)}`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('(not created yet: nothing has run)');
    expect(result.stdout).toContain(
      'Plan: 8 new, 32 copies of 8 distinct requests, generated once; at most $0.80 (no price seen yet for this model and input).',
    );
    expect(result.stdout).not.toContain('already paid');
    expect(result.stdout).toContain(
      "warning: 32 of the 40 items ask for the very same request as another item (the same model, input and prompt): only 8 distinct requests are generated, once each, and the others get a copy of the same video. For several different videos of one prompt, set 'variants: N' on the item",
    );

    const json = await plan(`${manifestYaml('repeats', 'max_cost_usd: "0.10"\n')}${items(40, 8)}`, '--json');
    const doc = JSON.parse(json.stdout);
    expect(doc.totals).toMatchObject({ new: 8, reused: 32, copies: 32, copied_requests: 8, to_submit: 8 });
    expect(doc.warnings).toEqual([
      expect.stringMatching(/^32 of the 40 items ask for the very same request/),
    ]);
  });

  it('one repeated prompt among others is a copy, without the warning', async () => {
    const result = await plan(`${manifestYaml('pair', 'max_cost_usd: "0.10"\n')}${items(3, 2)}`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'Plan: 2 new, 1 copy of 1 distinct request, generated once; at most $0.20',
    );
    expect(result.stdout).not.toContain('warning:');
  });
});
