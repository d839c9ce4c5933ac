import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import {
  attemptRows,
  cliEnv,
  killRunWhen,
  manifestYaml,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { ownProject, takeItems } from '../../support/services.js';

/**
 * A refusal says what the command left undone, in its own words: only `run` could have submitted
 * anything, so no other command ends with "nothing was submitted". `status`, `report` and `export`
 * only read; `import`, `forget` and `audit` write the ledger but never submit.
 */
const expectUndone = (result: { code: number | null; stderr: string }, code: number, undone: string) => {
  expect(result.code, result.stderr).toBe(code);
  expect(
    result.stderr
      .trimEnd()
      .split('\n')
      .some((line) => line.trimEnd().endsWith(undone)),
  ).toBe(true);
  expect(result.stderr).not.toContain('submitted');
};

describe('a broken manifest, and a shared batch named without its ledger', () => {
  const broken = tempProject({ 'batch.yaml': `${manifestYaml('broken')}items:\n  - {id: a, promt: x}\n` });
  const cli = (...args: string[]) => runCli(args, { cwd: broken });

  it.each([
    ['status', 'no status can be shown; nothing was changed:'],
    ['export', 'nothing was exported:'],
  ])('%s says %s', async (command, undone) => {
    const result = await cli(command, 'batch.yaml');
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(`mediabatch ${command}: 1 problem in the manifest; ${undone}`);
    expect(result.stderr).not.toContain('submitted');
  });

  it('status --batch without a shared ledger', async () => {
    const result = await cli('status', '--batch', 'shots');
    expectUndone(
      result,
      2,
      "its postgres:// URL (a SQLite ledger keeps no definition: its manifest is the batch's); no status can be shown; nothing was changed",
    );
  });
});

describe('import, forget and audit when the service cannot be reached', () => {
  it('each says what it did not do: nothing was forgotten, audited, imported', async () => {
    // One job accepted and running for a minute, its run killed: forget has a job to ask about.
    const sandbox = await startTestSandbox({ running_seconds: { min: 60, max: 60 } });
    const p = ownProject('undone', `${manifestYaml('undone', 'max_cost_usd: "1.00"\n')}${takeItems(['a'])}`);
    try {
      await killRunWhen(sandbox, p, () =>
        waitUntil(() => attemptRows(p).some((row) => row.state === 'accepted'), 10_000, 'the job'),
      );
    } finally {
      await sandbox.close();
    }
    // import rebuilds a lost ledger: the same manifest in a folder of its own, with no ledger yet.
    const lost = ownProject(
      'undone',
      `${manifestYaml('undone', 'max_cost_usd: "1.00"\n')}${takeItems(['a'])}`,
    );
    for (const [command, q, undone] of [
      ['forget', p, 'nothing was forgotten'],
      ['audit', p, 'nothing was audited'],
      ['import', lost, 'nothing was imported'],
    ] as const) {
      const result = await runCli([command, q.manifest], {
        cwd: q.dir,
        env: { ...cliEnv(sandbox), MEDIABATCH_PREFLIGHT_SECONDS: '0.3' },
      });
      expect(result.stderr, command).toContain(
        `cannot reach the service at ${sandbox.baseUrl} (connection refused`,
      );
      expectUndone(
        result,
        1,
        `${undone}. Check --base-url / MEDIAGEN_BASE_URL and the network, then re-run (MEDIABATCH_PREFLIGHT_SECONDS sets how long to keep trying)`,
      );
    }
  });
});

describe.skipIf(skipPostgresTests)('status of a shared batch whose database does not exist', () => {
  const postgres = usePostgresServer();

  it('says it showed nothing and changed nothing, not that nothing was submitted', async () => {
    const missing = new URL(postgres.server.url);
    missing.pathname = '/no_such_database';
    const dir = tempProject({});
    const result = await runCli(['status', '--batch', 'shots', '--ledger', missing.href], { cwd: dir });
    expect(result.stderr).toContain('database "no_such_database" does not exist');
    expectUndone(result, 2, 'no status can be shown; nothing was changed');
    expect(result.stderr).not.toContain(postgres.server.password);
  });
});
