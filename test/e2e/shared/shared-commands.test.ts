import { describe, expect, it } from 'vitest';
import { loadManifest, run } from '../../../src/index.js';
import { spawnCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { psql, skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { readSharedLedger, sharedViolations } from './shared-support.js';

/** Every command that takes a ledger, on a PostgreSQL one: the real CLI, and the library's option. */
describe.skipIf(skipPostgresTests)('the commands on a shared PostgreSQL ledger', () => {
  const postgres = usePostgresServer();

  it('run (the library), then plan, status, report, export, forget and import (the CLI)', async () => {
    const url = await postgres.server.createDatabase('commands');
    const sandbox = await startTestSandbox();
    const name = 'pg-commands';
    const p = project(
      name,
      `${manifestYaml(name)}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`,
    );
    const env = cliEnv(sandbox);
    const cli = (args: string[]) => spawnCli(args, { cwd: p.dir, env }).done;
    try {
      const handle = run(loadManifest(p.manifest), {
        ledger: url,
        env,
        cwd: p.dir,
        pollIntervalSeconds: 0.1,
      });
      expect((await handle.result).outcome).toBe('done');

      const plan = await cli(['plan', p.manifest, '--ledger', url, '--json']);
      expect(plan.code).toBe(0);
      expect(JSON.parse(plan.stdout).totals).toMatchObject({ items: 2, new: 0, done: 2 });
      const status = await cli(['status', p.manifest, '--ledger', url, '--json']);
      expect(JSON.parse(status.stdout).items.map((item: { state: string }) => item.state)).toEqual([
        'done',
        'done',
      ]);
      const report = await cli(['report', p.manifest, '--ledger', url]);
      expect([report.code, report.stdout]).toEqual([0, expect.stringContaining('2 done')]);
      const exported = await cli(['export', p.manifest, '--ledger', url]);
      expect(exported.stdout.trim().split('\n')).toHaveLength(2);
      const forget = await cli(['forget', p.manifest, '--ledger', url]);
      expect(forget.code).toBe(0);

      // The database lost and made again, empty: import rebuilds the ledger from the jobs the service
      // still holds, and the output folder, whose marker names this database, is its own again.
      const database = new URL(url).pathname.slice(1);
      await psql(postgres.server.url, `DROP DATABASE ${database} WITH (FORCE)`);
      await psql(postgres.server.url, `CREATE DATABASE ${database}`);
      const fresh = url;
      const imported = await cli(['import', p.manifest, '--ledger', fresh]);
      expect([imported.code, imported.stderr]).toEqual([0, '']);
      const rows = await readSharedLedger(fresh, name);
      expect(rows.attempts.map((attempt) => attempt.job_id).sort()).toEqual(
        sandbox
          .records()
          .jobs.map((job) => job.id)
          .sort(),
      );
      const after = await cli(['status', p.manifest, '--ledger', fresh, '--json']);
      expect(JSON.parse(after.stdout).items.map((item: { state: string }) => item.state)).toEqual([
        'done',
        'done',
      ]);
    } finally {
      await sandbox.close();
    }
  }, 90_000);

  it('three runners on a budget that fits 7 of 12 items: 7 done, the rest over budget, never a cent past it', async () => {
    const url = await postgres.server.createDatabase('budget');
    const sandbox = await startTestSandbox({ running_seconds: { min: 0.2, max: 0.5 } });
    const name = 'pg-budget';
    const items = Array.from(
      { length: 12 },
      (_, i) => `  - {id: k${String(i).padStart(2, '0')}, prompt: scene ${i}}`,
    );
    // 2 s of 480p cost $0.04: $0.30 fits seven.
    const head = manifestYaml(name, 'max_cost_usd: "0.04"\nbudget_usd: "0.30"\nconcurrency: 4\n');
    const p = project(name, `${head}items:\n${items.join('\n')}\n`);
    const args = ['run', p.manifest, '--ledger', url, '--poll-interval', '0.1'];
    try {
      const ends = await Promise.all(
        [0, 1, 2].map(() => spawnCli(args, { cwd: p.dir, env: cliEnv(sandbox), timeoutMs: 60_000 }).done),
      );
      expect(ends.map((end) => end.code)).toEqual([1, 1, 1]);
      const rows = await readSharedLedger(url, name);
      const states = rows.items.map((item) => item.state).sort();
      expect(states).toEqual([...Array(7).fill('done'), ...Array(5).fill('budget_exceeded')].sort());
      const done = { ...rows, items: rows.items.filter((item) => item.state === 'done') };
      const problems = sharedViolations(sandbox, done, {
        name,
        dir: p.dir,
        budgetMicros: 300_000,
        concurrency: 4,
      });
      expect(problems).toEqual([]);
    } finally {
      await sandbox.close();
    }
  }, 90_000);
});
