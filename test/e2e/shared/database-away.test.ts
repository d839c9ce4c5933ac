import { describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { postgresCanRestart, skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { readSharedLedger, sharedViolations } from './shared-support.js';

/**
 * A shared ledger's database as the CLI meets it (docs/shared-ledger.md): gone past the wait in
 * the middle of a run, fresh and empty, at a wrong address, asking for a password nobody gave.
 */
describe.skipIf(skipPostgresTests)('a shared ledger whose database is away, new, wrong or locked', () => {
  const postgres = usePostgresServer();

  it.skipIf(!postgresCanRestart)(
    'gone past the wait: the run says so once, stops with ledger_write_failed (exit 1), fails no item; a re-run pays nothing twice',
    async () => {
      const url = await postgres.server.createDatabase('away');
      // Jobs run for seconds: the database goes while they are in flight.
      const sandbox = await startTestSandbox({ running_seconds: { min: 2, max: 3 } });
      const name = 'db-away';
      const items = Array.from({ length: 8 }, (_, i) => `  - {id: w${i}, prompt: scene ${i}}`);
      const p = project(name, `${manifestYaml(name, 'concurrency: 3\n')}items:\n${items.join('\n')}\n`);
      // The stopped run cannot let its leases go (its database is gone): the re-run takes its items
      // once they lapse, so a short lease keeps that wait short.
      const env = { ...cliEnv(sandbox), MEDIABATCH_LEDGER_WAIT_SECONDS: '2', MEDIABATCH_LEASE_SECONDS: '3' };
      const args = ['run', p.manifest, '--ledger', url, '--poll-interval', '0.2'];
      try {
        const run = spawnCli(args, { cwd: p.dir, env, timeoutMs: 60_000 });
        const deadline = Date.now() + 20_000;
        while (sandbox.records().jobs.length < 3 && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 25));
        await postgres.server.stopServer();
        const stopped = await run.done;
        await postgres.server.startServer();
        const said = `${stopped.stdout}${stopped.stderr}`;
        expect(stopped.code).toBe(1);
        expect(said.match(/stopped answering: waiting up to 2s for it/g)).toHaveLength(1);
        expect(said).toMatch(
          /ledger_write_failed|stopped answering \(.*\); the run stopped, and no item failed/,
        );
        expect(said).not.toMatch(/internal error|please report|\n\s+at /);
        const again = await runCli(args, { cwd: p.dir, env, timeoutMs: 60_000 });
        expect(again.code).toBe(0);
        const rows = await readSharedLedger(url, name);
        expect(
          sharedViolations(sandbox, rows, {
            name,
            dir: p.dir,
            budgetMicros: Number.POSITIVE_INFINITY,
            concurrency: 3,
          }),
        ).toEqual([]);
        expect(
          sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name),
        ).toHaveLength(8);
      } finally {
        await sandbox.close();
      }
    },
    90_000,
  );

  it('fresh and empty: plan lists every item new and status every item pending, exit 0, nothing written', async () => {
    const url = await postgres.server.createDatabase('fresh');
    const name = 'db-fresh';
    const p = project(
      name,
      `${manifestYaml(name)}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`,
    );
    const plan = await runCli(['plan', p.manifest, '--ledger', url, '--json'], { cwd: p.dir, env: {} });
    expect([plan.code, plan.stderr]).toEqual([0, '']);
    expect(JSON.parse(plan.stdout).totals).toMatchObject({ new: 2, to_submit: 2 });
    const status = await runCli(['status', p.manifest, '--ledger', url, '--json'], { cwd: p.dir, env: {} });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).totals).toMatchObject({ items: 2, pending: 2 });
    const exported = await runCli(['export', p.manifest, '--ledger', url], { cwd: p.dir, env: {} });
    expect(exported.code).toBe(0);
  });

  it('a wrong address fails within 10 s naming it, exit 2, nothing submitted', async () => {
    const name = 'db-wrong';
    const p = project(name, `${manifestYaml(name)}items:\n  - {id: a, prompt: one}\n`);
    const started = Date.now();
    const result = await runCli(['plan', p.manifest, '--ledger', 'postgres://mb:secret@127.0.0.1:1/none'], {
      cwd: p.dir,
      env: {},
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('could not connect to 127.0.0.1:1');
    expect(result.stderr).not.toContain('secret');
  });

  it('a URL without its password, where the server asks for one, says to set PGPASSWORD or put it in the URL', async () => {
    const url = new URL(await postgres.server.createDatabase('nopass'));
    const password = decodeURIComponent(url.password);
    url.password = '';
    const name = 'db-nopass';
    const p = project(name, `${manifestYaml(name)}items:\n  - {id: a, prompt: one}\n`);
    const result = await runCli(['status', p.manifest, '--ledger', url.href], { cwd: p.dir, env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/set PGPASSWORD, or put the password in the URL/);
    if (password) expect(result.stderr).not.toContain(password);
  });
});
