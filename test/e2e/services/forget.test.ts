import { afterEach, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  attemptRows,
  cliEnv,
  type E2eProject,
  fastConfig,
  killRunWhen,
  ledgerRows,
  manifestYaml,
  startClockedSandbox,
  waitUntil,
} from '../../support/e2e.js';
import { itemStates, ownProject, takeItems } from '../../support/services.js';

/**
 * Issue case 6: the service forgot jobs the ledger holds. `run` stops (exit 3) and says so;
 * `mediabatch forget` gives up exactly the jobs the service answers 404 for, keeps what they cost,
 * and the next `plan` and `run` say they pay for those items again, and how much at most.
 */

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const forget = (p: E2eProject, env: Record<string, string>, ids: string[] = []) =>
  runCli(['forget', p.manifest, ...ids], {
    cwd: p.dir,
    env: { MEDIABATCH_PREFLIGHT_SECONDS: '0.3', ...env },
  });

/** Two jobs accepted and running for 30 s, the run killed; the third item never sent. */
async function twoJobsInFlight(): Promise<{ p: E2eProject; port: number }> {
  const clocked = await startClockedSandbox({ running_seconds: { min: 30, max: 30 } });
  sandbox = clocked.sandbox;
  const p = ownProject(
    'lost',
    `${manifestYaml('lost', 'concurrency: 2\nmax_cost_usd: "1.00"\n')}${takeItems(['a', 'b', 'c'])}`,
  );
  await killRunWhen(clocked.sandbox, p, () =>
    waitUntil(
      () => attemptRows(p).filter((row) => row.state === 'accepted').length === 2,
      10_000,
      'two jobs',
    ),
  );
  return { p, port: clocked.sandbox.port };
}

const jobStatuses = (p: E2eProject) =>
  ledgerRows<{ item_id: string; job_status: string; amount_micros: number }>(
    p,
    'SELECT item_id, job_status, amount_micros FROM attempts ORDER BY item_id',
  );

describe('mediabatch forget (case 6)', () => {
  it('refuses while the service knows the job, or the URL or key is wrong; changes nothing', async () => {
    const { p } = await twoJobsInFlight();
    const live = sandbox!;
    const before = { states: itemStates(p), jobs: jobStatuses(p) };
    const known = await forget(p, cliEnv(live));
    expect(known.code, known.stderr).toBe(1);
    expect(known.stdout).toMatch(/left a: job job_\w+: the service still knows it \(running\)/);
    expect(known.stdout).toContain('nothing was forgotten');
    const noV1 = await forget(p, { MEDIAGEN_API_KEY: live.apiKey }, [
      '--base-url',
      live.baseUrl.replace(/\/v1$/, ''),
    ]);
    expect(noV1.code).toBe(2);
    // As with run, the bound ledger names its own service before anything is sent.
    expect(noV1.stderr).toContain(`To go on with the ledger's own service: --base-url ${live.baseUrl}`);
    const badKey = await forget(p, cliEnv(live, 'mg_wrong_key_000000000000'));
    expect(badKey.code).toBe(3);
    expect(badKey.stderr).toContain('the service refused the account (invalid_api_key');
    expect(badKey.stderr + badKey.stdout).not.toContain('mg_wrong_key');
    const unknownId = await forget(p, cliEnv(live), ['aa']);
    expect(unknownId.code).toBe(2);
    expect(unknownId.stderr).toContain(
      "no item 'aa' in the manifest, did you mean 'a'?; nothing was forgotten",
    );
    expect({ states: itemStates(p), jobs: jobStatuses(p) }).toEqual(before);
    expect(allPosts(live)).toHaveLength(2);
  });

  it('gives up jobs the service lost, keeps their cost; plan and run say they pay again, then do', async () => {
    const { p, port } = await twoJobsInFlight();
    const paid = jobStatuses(p).map((row) => row.amount_micros);
    expect(paid.every((amount) => amount > 0)).toBe(true);
    await sandbox!.close();
    // The same address, but a service that lost its records.
    sandbox = await startSandbox(fastConfig(), { port });
    const stuck = await runCli(['run', p.manifest], { cwd: p.dir, env: cliEnv(sandbox) });
    expect(stuck.code).toBe(3);
    expect(stuck.stdout).toContain('`mediabatch forget <manifest>` gives them up');

    const one = await forget(p, cliEnv(sandbox), ['a']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(
      /forgot a: job job_\w+ is unknown to the service; it cost \$0\.\d\d, and the item is pending again/,
    );
    expect(itemStates(p)).toEqual({ a: 'pending', b: 'in_flight', c: 'pending' });
    const rest = await forget(p, cliEnv(sandbox));
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stdout).toContain('forgot b:');
    expect(jobStatuses(p)).toEqual([
      { item_id: 'a', job_status: 'lost', amount_micros: paid[0] },
      { item_id: 'b', job_status: 'lost', amount_micros: paid[1] },
    ]);
    expect(allPosts(sandbox)).toHaveLength(0);
    expect(
      sandbox
        .records()
        .requests.every((request) => request.method === 'GET' && /\/(account|jobs)/.test(request.path)),
    ).toBe(true);

    const plan = await runCli(['plan', p.manifest], { cwd: p.dir, env: cliEnv(sandbox) });
    expect(plan.code, plan.stderr).toBe(0);
    const again =
      /2 items whose paid jobs the service lost \(mediabatch forget\) are paid for again: expected \$[\d.]+, at most \$2\.00/;
    expect(plan.stdout).toMatch(again);
    expect(plan.stdout).toContain('Plan: 1 new, 2 to retry;');

    const run = await runCli(['run', p.manifest, '--poll-interval', '0.1'], {
      cwd: p.dir,
      env: cliEnv(sandbox),
    });
    expect(run.code, run.stderr).toBe(0);
    const said = run.stdout.search(again);
    expect(said).toBeGreaterThanOrEqual(0);
    expect(said).toBeLessThan(run.stdout.indexOf('a: in flight'));
    expect(itemStates(p)).toEqual({ a: 'done', b: 'done', c: 'done' });
    expect(allPosts(sandbox)).toHaveLength(3);
    // What the lost jobs cost stays in the spend, beside what the new ones cost.
    const charged = ledgerRows<{ total: number }>(p, 'SELECT SUM(amount_micros) AS total FROM attempts')[0]!
      .total;
    const fresh = sandbox.records().jobs.reduce((sum, job) => sum + job.amountMicros, 0);
    expect(charged).toBe(paid[0]! + paid[1]! + fresh);
  });
});
