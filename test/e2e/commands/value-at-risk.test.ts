import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, spawnCli } from '../../support/cli.js';
import {
  cliEnv,
  type E2eProject,
  ledgerRows,
  manifestYaml,
  project,
  startTestSandbox,
} from '../../support/e2e.js';
import { until } from '../faults/support.js';

let sandbox: SandboxHandle | undefined;
const kills: Array<() => void> = [];
afterEach(async () => {
  for (const kill of kills.splice(0)) kill();
  await sandbox?.close();
  sandbox = undefined;
});

interface Unsaved {
  outputs: number;
  net: number;
  earliest: string | null;
}

/** The paid, unsaved, unexpired outputs, straight from the ledger with plain SQL. */
function unsavedInLedger(p: E2eProject): Unsaved {
  return ledgerRows<Unsaved>(
    p,
    `SELECT COUNT(*) AS outputs, COALESCE(SUM(amount_micros - refunded_micros), 0) AS net, MIN(expires_at) AS earliest
       FROM attempts WHERE job_status = 'succeeded' AND files_saved = 0 AND expires_at > ?`,
    new Date().toISOString(),
  )[0]!;
}

describe('value at risk in status and plan', () => {
  it('shows paid outputs not saved yet, their cost and first expiry, first when under six hours, as the ledger says', async () => {
    // Outputs kept five hours, and downloads at 50 bytes a second: finished jobs wait unsaved.
    const s = await startTestSandbox({
      retention_seconds: 5 * 3600,
      faults: { download_bytes_per_second: 50 },
    });
    sandbox = s;
    const name = 'at-risk';
    const ids = ['a', 'b', 'c', 'd'];
    const p = project(
      name,
      `${manifestYaml(name, 'concurrency: 4\n')}items:\n${ids.map((id) => `  - {id: ${id}, prompt: "shot ${id}"}`).join('\n')}\n`,
    );
    const run = spawnCli(['run', p.manifest, '--poll-interval', '0.1'], { cwd: p.dir, env: cliEnv(s) });
    kills.push(() => run.child.kill('SIGKILL'));
    // The sandbox first: by the time its jobs succeeded the ledger exists, and then it learns of them.
    const succeeded = () => s.records().jobs.filter((job) => job.status === 'succeeded').length;
    await until(() => succeeded() === ids.length, 'four jobs finished', 20_000, run.done);
    await until(
      () => unsavedInLedger(p).outputs === ids.length,
      'four finished jobs unsaved',
      20_000,
      run.done,
    );

    const ledger = unsavedInLedger(p);
    const cost = (ledger.net / 1e6).toFixed(6);
    const statusDoc = JSON.parse((await runCli(['status', p.manifest, '--json'], { cwd: p.dir })).stdout) as {
      value_at_risk: Record<string, unknown>;
    };
    const planDoc = JSON.parse((await runCli(['plan', p.manifest, '--json'], { cwd: p.dir })).stdout) as {
      value_at_risk: Record<string, unknown>;
    };
    for (const doc of [statusDoc, planDoc]) {
      expect(doc.value_at_risk).toMatchObject({
        outputs: 4,
        cost_usd: cost,
        earliest_expires_at: ledger.earliest,
        urgent: true,
      });
      const left = doc.value_at_risk.seconds_left as number;
      const expected = (Date.parse(ledger.earliest!) - Date.now()) / 1000;
      expect(Math.abs(left - expected)).toBeLessThan(30);
      expect(left).toBeGreaterThan(4.9 * 3600);
    }
    expect(cost).toBe('0.160000');

    // The text says it first, with the command that saves them.
    const statusText = (await runCli(['status', 'batch.yaml'], { cwd: p.dir })).stdout;
    const planText = (await runCli(['plan', 'batch.yaml'], { cwd: p.dir })).stdout;
    for (const text of [statusText, planText]) {
      expect(text.split('\n')[0]).toMatch(
        new RegExp(
          `^AT RISK: 4 paid outputs are not saved yet \\(\\$0\\.16\\); the first expires in 4h5\\dm \\(${ledger.earliest!.replace(/[.]/g, '\\.')}\\)\\. Save them now: mediabatch run batch\\.yaml$`,
        ),
      );
    }
  }, 60_000);
});
