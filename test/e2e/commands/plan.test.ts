import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { fingerprint, finished, LedgerBuilder, ledgerPath, noLedgerIn, project } from './fixtures.js';

const MANIFEST = `version: 1
name: plan-test
input: {seconds: 6, definition: 720p}
budget_usd: "3.00"
items:
  - {id: done-1, prompt: p1}
  - {id: changed-1, prompt: p2 rewritten since}
  - {id: unanswered-1, prompt: p3}
  - {id: running-1, prompt: p4, input: {seconds: 8}}
  - {id: retry-1, prompt: p5}
  - {id: expired-1, prompt: p6}
  - {id: failed-1, prompt: p7}
  - {id: new-1, prompt: p8}
  - {id: new-long, prompt: p9, input: {seconds: 10}}
  - {id: new-capped, prompt: p10, input: {seconds: 12}, max_cost_usd: "5.00"}
`;

/**
 * Charged 0.25 x 5 + 0.40 = 1.65, refunded 0.50, so spent 1.15; reserved 0.30; budget left 1.55.
 * Prices seen: 0.25 for 6 s 720p, 0.40 for 8 s 720p, mean 0.275.
 */
async function situation() {
  const { dir, manifest } = project(MANIFEST);
  const b = await LedgerBuilder.open(dir, manifest);
  await b.done('done-1', '0.25');
  // Done for an older prompt: the manifest's request is another video now.
  await b.done('changed-1', '0.25', {
    ...b.item('changed-1'),
    input: { ...b.item('changed-1').input, prompt: 'an older prompt' },
  });
  await b.put('changed-1', 'done', { stale: true });
  await b.put('unanswered-1', 'pending');
  await b.prepare('unanswered-1', '0.30');
  await b.put('running-1', 'pending');
  await b.job(await b.prepare('running-1'), '0.40', 'running');
  await b.failed('retry-1', '0.25', 'retries_exhausted', 'processing_failed three times');
  await b.put('expired-1', 'pending');
  await b.job(await b.prepare('expired-1'), '0.25', 'succeeded', finished(-1));
  await b.ledger.setItemState('expired-1', {
    state: 'expired',
    errorCode: 'expired',
    errorMessage: 'outputs deleted',
  });
  await b.failed('failed-1', '0.25', 'content_rejected', 'moderation');
  await b.close();
  return { dir, manifest, ledger: ledgerPath(dir, manifest) };
}

describe('mediabatch plan', () => {
  it('--json labels every item and totals what run would do', async () => {
    const { dir } = await situation();
    const result = await runCli(['plan', 'batch.yaml', '--json'], { cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(Object.keys(doc)).toEqual([
      'manifest',
      'summary',
      'items',
      'renamed',
      'removed',
      'stray_files',
      'totals',
      'file_check',
      'value_at_risk',
      'account',
      'pays_again',
      'warnings',
      'without_keeper',
      'keepers_outside_manifest',
    ]);
    expect(doc.pays_again).toBeNull();
    expect(doc.summary).toBe(
      "Plan: 2 new, 1 changed, 1 to retry, 2 to resume, 1 unchanged, 1 beyond budget_usd, 2 skipped; expected $0.75 for 3 of 4 items (based on 5 prices seen; none yet for the others' model and input), at most $1.55 (budget left $1.55 of $3.00).",
    );
    expect(doc.removed).toEqual([]);
    expect(doc.stray_files).toEqual([]);
    expect(doc.manifest).toBe('plan-test');
    expect(doc.account).toBeNull();
    const byId = Object.fromEntries(doc.items.map((item: { id: string }) => [item.id, item]));
    expect(doc.items.map((item: { plan: string }) => item.plan)).toEqual([
      'done',
      'changed',
      'in_flight',
      'in_flight',
      'retry',
      'expired',
      'failed',
      'new',
      'new',
      'blocked_by_budget',
    ]);
    expect(byId['done-1']).toEqual({ id: 'done-1', plan: 'done', estimate_usd: null });
    expect(byId['changed-1']).toMatchObject({
      estimate_usd: '0.250000',
      reason: expect.stringContaining('changed'),
    });
    expect(byId['unanswered-1'].reason).toContain('no recorded answer');
    expect(byId['running-1'].reason).toContain('job_running-1_1 running');
    expect(byId['retry-1']).toMatchObject({
      estimate_usd: '0.250000',
      reason: expect.stringContaining('retries_exhausted'),
    });
    expect(byId['expired-1']).toMatchObject({
      estimate_usd: null,
      reason: expect.stringContaining('--regenerate-expired'),
    });
    expect(byId['failed-1']).toMatchObject({
      estimate_usd: null,
      reason: 'content_rejected: moderation (skipped)',
    });
    expect(byId['new-1']).toEqual({ id: 'new-1', plan: 'new', estimate_usd: '0.250000' });
    expect(byId['new-long']).toEqual({ id: 'new-long', plan: 'new', estimate_usd: '0.275000' });
    expect(byId['new-capped']).toMatchObject({
      estimate_usd: '5.000000',
      reason:
        'reserves its max_cost_usd cap of $5.00 but $0.525 is left of budget_usd (prices seen $0.25-$0.40): ' +
        'raise budget_usd, or lower max_cost_usd to about $0.40, the prices seen (the cheaper fix); ' +
        '$0.30 reserved by unanswered attempts may free up',
    });
    expect(doc.totals).toEqual({
      items: 10,
      new: 2,
      changed: 1,
      in_flight: 2,
      done: 1,
      refetch: 0,
      retry: 1,
      redo: 0,
      renamed: 0,
      reused: 0,
      expired: 1,
      failed: 1,
      held_back: 0,
      blocked_by_budget: 1,
      to_submit: 4,
      budget_permitting: 0,
      removed: 0,
      stray_files: 0,
      spent_usd: '1.150000',
      refunded_usd: '0.500000',
      reserved_usd: '0.300000',
      budget_usd: '3.000000',
      budget_left_usd: '1.550000',
      estimate_usd: '1.025000',
      // new-long's kind was never charged: its mean-price guess is in estimate_usd, never in expected_usd.
      expected_usd: '0.750000',
      expected_items: 3,
      expected_samples: 5,
      at_most_usd: '1.550000',
      copies: 0,
      copied_requests: 0,
      files_missing: 0,
      files_altered: 0,
      files_touched: 0,
    });
    expect(doc.warnings).toEqual([
      expect.stringMatching(
        /^1 item will not fit in budget_usd: new-capped reserves its max_cost_usd cap of \$5\.00/,
      ),
    ]);
  });

  it('shows the plan as a table with totals for people', async () => {
    const { dir, ledger } = await situation();
    const result = await runCli(['plan', 'batch.yaml'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.slice(0, 12)).toEqual([
      'plan-test: 10 items',
      'ITEM            PLAN               EXPECTED  DETAIL',
      '= done-1        unchanged (done)',
      '~ changed-1     changed            $0.25     input.prompt',
      '> unanswered-1  resume                       attempt 1 has no recorded answer: resent with its own key and body',
      '> running-1     resume                       job job_running-1_1 running: watched and downloaded',
      expect.stringMatching(/^\+ retry-1 {7}retry {14}\$0\.25 {5}last attempt ended with retries_exhausted/),
      '! expired-1     expired                      outputs were deleted before they were saved; run --regenerate-expired pays for them again',
      '! failed-1      failed                       content_rejected: moderation (skipped)',
      '+ new-1         new                $0.25',
      '+ new-long      new                $0.275',
      expect.stringMatching(
        /^! new-capped {4}blocked by budget {2}\$5\.00 {5}reserves its max_cost_usd cap of \$5\.00 but \$0\.525 is left/,
      ),
    ]);
    expect(result.stdout).toContain(
      'spent so far $1.15 net of refunds (refunded $0.50), reserved $0.30, budget left $1.55 of $3.00',
    );
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(
      "Plan: 2 new, 1 changed, 1 to retry, 2 to resume, 1 unchanged, 1 beyond budget_usd, 2 skipped; expected $0.75 for 3 of 4 items (based on 5 prices seen; none yet for the others' model and input), at most $1.55 (budget left $1.55 of $3.00).",
    );
    expect(result.stdout).toContain('account: not checked');
    expect(result.stdout).toContain(`ledger: ${ledger}`);
  });

  it('never modifies an existing ledger', async () => {
    const { dir, ledger } = await situation();
    const before = fingerprint(ledger);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await runCli(['plan', 'batch.yaml'], { cwd: dir })).code).toBe(0);
    expect((await runCli(['plan', 'batch.yaml', '--json'], { cwd: dir })).code).toBe(0);
    expect(fingerprint(ledger)).toEqual(before);
  });

  it('without a ledger every item is new, the estimate unknown, and no ledger is created', async () => {
    const dir = tempProject({ 'batch.yaml': MANIFEST });
    const result = await runCli(['plan', 'batch.yaml', '--json'], { cwd: dir });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc.items.map((item: { plan: string }) => item.plan)).toEqual([
      ...Array(9).fill('new'),
      'blocked_by_budget',
    ]);
    expect(doc.totals).toMatchObject({
      new: 9,
      blocked_by_budget: 1,
      spent_usd: '0.000000',
      estimate_usd: null,
    });
    expect(doc.warnings[0]).toMatch(/^9 items to submit have no price seen/);
    expect(noLedgerIn(dir)).toBe(true);
    const text = await runCli(['plan', 'batch.yaml'], { cwd: dir });
    expect(text.stdout).toContain(
      'Plan: 9 new, 1 beyond budget_usd; at most $3.00 (no price seen yet for this model and input) (budget left $3.00 of $3.00).',
    );
    expect(noLedgerIn(dir)).toBe(true);
  });

  it('accumulates seen prices against the budget in manifest order', async () => {
    const { dir, manifest } = project(`version: 1
name: tight
input: {seconds: 6, definition: 720p}
budget_usd: "1.00"
items:
  - {id: first, prompt: a}
  - {id: second, prompt: b}
  - {id: third, prompt: c}
  - {id: fourth, prompt: d}
`);
    const b = await LedgerBuilder.open(dir, manifest);
    await b.done('first', '0.40');
    await b.close();
    const doc = JSON.parse((await runCli(['plan', 'batch.yaml', '--json'], { cwd: dir })).stdout);
    expect(doc.items.map((item: { plan: string }) => item.plan)).toEqual([
      'done',
      'new',
      'blocked_by_budget',
      'blocked_by_budget',
    ]);
    expect(doc.items[2].reason).toBe(
      'has no max_cost_usd, so it reserves all that is left of budget_usd, $0.20, which is less than it costs ' +
        '(prices seen $0.40): raise budget_usd',
    );
    expect(doc.totals).toMatchObject({
      new: 1,
      blocked_by_budget: 2,
      budget_left_usd: '0.600000',
      estimate_usd: '0.400000',
    });
  });

  it('a manifest without budget_usd blocks nothing', async () => {
    const dir = tempProject({ 'batch.yaml': 'version: 1\nname: free\nitems:\n  - {id: a, prompt: x}\n' });
    const doc = JSON.parse((await runCli(['plan', 'batch.yaml', '--json'], { cwd: dir })).stdout);
    expect(doc.items).toEqual([{ id: 'a', plan: 'new', estimate_usd: null }]);
    expect(doc.totals).toMatchObject({ budget_usd: null, budget_left_usd: null, blocked_by_budget: 0 });
  });

  it('a bad manifest exits 2 with every problem at file:line:column, and creates nothing', async () => {
    const dir = tempProject({
      'batch.yaml':
        'version: 1\nname: bad\nitems:\n  - {id: a, prompt: ""}\n  - {id: b, prompt: x, colour: red}\n',
    });
    const result = await runCli(['plan', 'batch.yaml', '--json'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/batch\.yaml:4:\d+: items\[0\]\.prompt/);
    expect(result.stderr).toMatch(/batch\.yaml:5:\d+: items\[1\]/);
    expect(noLedgerIn(dir)).toBe(true);
  });

  it('--base-url without MEDIAGEN_API_KEY is a usage error; an exported base URL alone skips the check', async () => {
    const dir = tempProject({ 'batch.yaml': MANIFEST });
    const flagged = await runCli(['plan', 'batch.yaml', '--base-url', 'http://127.0.0.1:9/v1'], { cwd: dir });
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toContain('MEDIAGEN_API_KEY is not set');
    const exported = await runCli(['plan', 'batch.yaml', '--json'], {
      cwd: dir,
      env: { MEDIAGEN_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout).account).toBeNull();
    expect(exported.stderr).toContain('the account is not checked');
  });
});
