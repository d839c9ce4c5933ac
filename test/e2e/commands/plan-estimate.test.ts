import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd, formatUsdHuman } from '../../../src/money.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  ledgerMoney,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sandboxMoney,
  startTestSandbox,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
const p = project(
  'honest',
  manifestYaml(
    'honest',
    'budget_usd: "2.00"\nmax_cost_usd: "0.50"\nitems:\n' +
      ['a', 'b', 'c', 'd'].map((id) => `  - {id: ${id}, prompt: "${id} at dusk"}`).join('\n') +
      '\n',
  ),
);
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox.close();
  rmSync(p.dir, { recursive: true, force: true });
});

const NO_PRICE =
  'Plan: 4 new; at most $2.00 (no price seen yet for this model and input) (budget left $2.00 of $2.00).';

describe('honest estimates', () => {
  it('before any price is known, plan and run promise only the bound, and say why', async () => {
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    const doc = JSON.parse(plan.stdout);
    expect(doc.summary).toBe(NO_PRICE);
    expect(doc.totals).toMatchObject({ expected_usd: null, expected_items: 0, expected_samples: 0 });
    const run = await runAgainst(sandbox, p, ['--only', 'a', 'b']);
    expect(run.code).toBe(0);
    // run's plan line speaks of the items --only selects, in the same words.
    expect(run.stdout.split('\n')[0]).toBe(
      'Plan: 2 new; at most $1.00 (no price seen yet for this model and input) (budget left $2.00 of $2.00).',
    );
  });

  it("after a run, the summary's spend and the next plan's expectation agree with the ledger", async () => {
    const net = (m: { chargedMicros: number; refundedMicros: number }) => m.chargedMicros - m.refundedMicros;
    const ledger = ledgerMoney(p);
    expect(net(ledger)).toBe(net(sandboxMoney(sandbox, 'honest')));
    const prices = ledgerRows<{ amount_micros: number }>(
      p,
      "SELECT amount_micros FROM attempts WHERE state = 'accepted' AND job_id IS NOT NULL",
    );
    expect(prices).toHaveLength(2);
    const price = prices[0]!.amount_micros;
    expect(prices[1]!.amount_micros).toBe(price);

    const status = await runCli(['status', p.manifest, '--json'], { cwd: p.dir });
    expect(JSON.parse(status.stdout).totals.spent_usd).toBe(formatUsd(net(ledger)));
    const plan = JSON.parse((await runCli(['plan', p.manifest, '--json'], { cwd: p.dir })).stdout);
    expect(plan.totals).toMatchObject({
      to_submit: 2,
      spent_usd: formatUsd(net(ledger)),
      expected_usd: formatUsd(2 * price),
      expected_items: 2,
      expected_samples: 2,
    });
    const left = 2_000_000 - net(ledger);
    expect(plan.summary).toBe(
      `Plan: 2 new, 2 unchanged; expected ${formatUsdHuman(2 * price)} (based on 2 prices seen), at most $1.00 (budget left ${formatUsdHuman(left)} of $2.00).`,
    );
  });

  it("the run's closing summary says what the ledger says was spent", async () => {
    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(0);
    const ledger = ledgerMoney(p);
    const spent = ledger.chargedMicros - ledger.refundedMicros;
    expect(run.stdout).toContain(
      `\nspent ${formatUsdHuman(spent)} (refunded ${formatUsdHuman(ledger.refundedMicros)}), budget left ${formatUsdHuman(2_000_000 - spent)} of $2.00\n`,
    );
    const plan = JSON.parse((await runCli(['plan', p.manifest, '--json'], { cwd: p.dir })).stdout);
    expect(plan.totals).toMatchObject({ to_submit: 0, expected_usd: null, spent_usd: formatUsd(spent) });
  });
});
