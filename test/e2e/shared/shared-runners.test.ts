import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, spawnCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import {
  type PostgresTestServer,
  skipPostgresTests,
  startPostgresServer,
} from '../../support/postgres-server.js';
import { seededRandom } from '../../support/seeded-random.js';
import { readSharedLedger, sharedViolations } from './shared-support.js';

const seed = Number(process.env.SHARED_SEED ?? Math.floor(Math.random() * 2 ** 31));

describe.skipIf(skipPostgresTests)('several runners on one shared PostgreSQL ledger', () => {
  let server: PostgresTestServer;
  beforeAll(async () => {
    server = await startPostgresServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('three runners, each killed with SIGKILL several times, then run to the end: one net charge per item, every file whole, budget and concurrency kept', async () => {
    const random = seededRandom(seed);
    const url = await server.createDatabase('shared');
    const sandbox = await startTestSandbox({
      seed,
      workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 8 }],
      running_seconds: { min: 0.4, max: 1.2 },
      faults: {
        job_failures: { processing_failed: 0.1 },
        http500_before_store: 0.05,
        http500_after_store: 0.1,
        drop_before_store: 0.05,
        drop_after_store: 0.1,
      },
    });
    const name = 'shared-kills';
    const items = Array.from(
      { length: 30 },
      (_, i) => `  - {id: s${String(i).padStart(2, '0')}, prompt: scene ${i}}`,
    );
    const concurrency = 5;
    const budgetMicros = 1_500_000;
    const p = project(
      name,
      `${manifestYaml(name, `max_cost_usd: "0.05"\nbudget_usd: "1.50"\nconcurrency: ${concurrency}\n`)}items:\n${items.join('\n')}\n`,
    );
    const env = { ...cliEnv(sandbox), MEDIABATCH_LEASE_SECONDS: '1.5' };
    const args = ['run', p.manifest, '--ledger', url, '--poll-interval', '0.1', '--json'];
    const start = () => spawnCli(args, { cwd: p.dir, env, timeoutMs: 120_000 });
    try {
      const runners = [start(), start(), start()];
      const killsOf = [0, 0, 0];
      let kills = 0;
      // Kills at random moments while the batch is under way, each killed runner started again.
      while (kills < 9) {
        await new Promise((resolve) => setTimeout(resolve, 300 + random() * 700));
        const index = Math.floor(random() * 3);
        const runner = runners[index]!;
        if (runner.child.exitCode !== null) break;
        runner.child.kill('SIGKILL');
        await runner.done;
        kills += 1;
        killsOf[index]! += 1;
        runners[index] = start();
      }
      const ends: CliResult[] = await Promise.all(runners.map((runner) => runner.done));
      console.log(`shared runners: seed ${seed}, ${kills} kills (${killsOf.join('/')} per runner)`);
      expect(kills).toBeGreaterThanOrEqual(9);
      expect(ends.map((end) => end.code)).toEqual([0, 0, 0]);
      const rows = await readSharedLedger(url, name);
      expect(rows.items).toHaveLength(30);
      const problems = sharedViolations(sandbox, rows, { name, dir: p.dir, budgetMicros, concurrency });
      expect(problems).toEqual([]);
    } finally {
      await sandbox.close();
    }
  }, 150_000);
});
