import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { waitForOutput } from '../../support/cli.js';
import {
  checkSavedOutputs,
  expectMoneyAgrees,
  jobsOfItem,
  manifestYaml,
  runAgainst,
  spawnRun,
  startClockedSandbox,
  waitUntil,
} from '../../support/e2e.js';
import { itemStates, ownProject, takeItems } from '../../support/services.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const items = (ids: string[]) => takeItems(ids);
const IDS = ['a', 'b', 'c', 'd'];
const workspace = [{ id: 'ws_test', balance_usd: '100', wallet_enabled: true, concurrency_limit: 2 }];

/**
 * The first two jobs run for a minute on the sandbox's clock, which only the test moves on: they
 * are still in flight, and c and d not yet sent, when the outage comes, however slow the machine.
 * `release` ends them and makes the jobs created from then on short.
 */
async function twoLongJobs() {
  const clocked = await startClockedSandbox({ workspaces: workspace, running_seconds: { min: 60, max: 60 } });
  const release = () => {
    clocked.sandbox.update({ running_seconds: { min: 0.1, max: 0.3 } });
    clocked.advance(61);
  };
  return { sandbox: clocked.sandbox, release };
}

describe('outages after the service has answered', () => {
  it('are waited out with one line, not a warning per request', async () => {
    const { sandbox: s, release } = await twoLongJobs();
    sandbox = s;
    const p = ownProject('outage', `${manifestYaml('outage', 'concurrency: 2\n')}${items(IDS)}`);
    const { child, done } = spawnRun(sandbox, p);
    await waitUntil(() => sandbox!.records().jobs.length === 2, 20_000, 'two jobs');
    await sandbox.stopListening();
    await waitForOutput(child, (text) => text.includes('no answer from the service'));
    // Three seconds of polls at 0.1 s, every one unanswered.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await sandbox.resumeListening();
    release();
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    const outageLines = result.stdout
      .split('\n')
      .filter((line) => /no answer from the service|unreachable/.test(line));
    expect(outageLines).toHaveLength(1);
    expect(result.stdout).toMatch(/the service answers again, after [3-9]s/);
    expect(checkSavedOutputs(sandbox, p, 'outage', IDS).problems).toEqual([]);
    await expectMoneyAgrees(sandbox, p, 'outage');
  }, 60_000);

  it('Ctrl-C during an outage stops at once (exit 130); a re-run finishes and pays once per item', async () => {
    const { sandbox: s, release } = await twoLongJobs();
    sandbox = s;
    const p = ownProject('cut-off', `${manifestYaml('cut-off', 'concurrency: 2\n')}${items(IDS)}`);
    const { child, done } = spawnRun(sandbox, p);
    await waitUntil(() => sandbox!.records().jobs.length === 2, 20_000, 'two jobs');
    await sandbox.stopListening();
    await waitForOutput(child, (text) => text.includes('no answer from the service'));
    const signalled = Date.now();
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    expect(Date.now() - signalled).toBeLessThan(3000);
    expect(result.stdout).toContain('stopping: no new submissions');
    const states = itemStates(p);
    expect(Object.values(states).filter((state) => state === 'in_flight')).toHaveLength(2);
    expect(Object.values(states).filter((state) => state === 'pending')).toHaveLength(2);

    await sandbox.resumeListening();
    release();
    const rerun = await runAgainst(sandbox, p);
    expect(rerun.code, rerun.stderr).toBe(0);
    for (const id of IDS) expect(jobsOfItem(sandbox, 'cut-off', id)).toHaveLength(1);
    expect(checkSavedOutputs(sandbox, p, 'cut-off', IDS).problems).toEqual([]);
    await expectMoneyAgrees(sandbox, p, 'cut-off');
  }, 60_000);
});
