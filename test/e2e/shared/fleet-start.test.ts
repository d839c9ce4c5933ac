import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, spawnCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { readSharedLedger, sharedViolations } from './shared-support.js';

/**
 * A fleet started the way a scheduler starts one (a Kubernetes Job with parallelism 5, a systemd
 * template, a CI matrix): five runners at the same moment on a new shared batch. The check for a
 * lost ledger must never take a batch-mate's jobs for another ledger's (issue 52): every runner
 * works the batch, each item is paid once. The gallery is written once for the fleet, by the
 * last runner to end, not once per runner.
 */

const RUNNERS = 5;
const ROUNDS = 10;
const ITEMS = 12;
const CONCURRENCY = 4;

describe.skipIf(skipPostgresTests)('a fleet started together on a new shared batch', () => {
  const postgres = usePostgresServer();

  it(`${RUNNERS} runners at once, ${ROUNDS} rounds: each exits 0 or 1, one charge per item`, async () => {
    const url = await postgres.server.createDatabase('fleet');
    const sandbox = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 8 }],
      running_seconds: { min: 0.05, max: 0.2 },
      // A slow list: a runner's look at the service lands after a batch-mate's first POSTs, the
      // moment the lost-ledger check once read wrongly (it read the ledger before listing).
      faults: { list_latency_ms: { min: 300, max: 1500 } },
    });
    try {
      // Short leases: a runner that ends early waits less for its batch-mates' last items.
      const env = { ...cliEnv(sandbox), MEDIABATCH_LEASE_SECONDS: '1.5' };
      let leftTotal = 0;
      for (let round = 0; round < ROUNDS; round += 1) {
        // A new batch each round, on the same service: the service already holds earlier rounds'
        // jobs, of other batches, which no runner may take for this one's.
        const name = `fleet-${round}`;
        const items = Array.from({ length: ITEMS }, (_, i) => `  - {id: f${i}, prompt: scene ${i}}`);
        const extra = `max_cost_usd: "0.05"\nbudget_usd: "5.00"\nconcurrency: ${CONCURRENCY}\n`;
        const p = project(name, `${manifestYaml(name, extra)}items:\n${items.join('\n')}\n`);
        const args = ['run', p.manifest, '--ledger', url, '--poll-interval', '0.05'];
        const runners = Array.from({ length: RUNNERS }, () =>
          spawnCli(args, { cwd: p.dir, env, timeoutMs: 60_000 }),
        );
        const ends: CliResult[] = await Promise.all(runners.map((runner) => runner.done));
        const said = ends.map((end, n) => `runner ${n} (round ${round}) exit ${end.code}:\n${end.stderr}`);
        expect(
          ends.every((end) => end.code === 0 || end.code === 1),
          said.join('\n---\n'),
        ).toBe(true);
        const rows = await readSharedLedger(url, name);
        expect(rows.items).toHaveLength(ITEMS);
        const batch = { name, dir: p.dir, budgetMicros: 5_000_000, concurrency: CONCURRENCY };
        expect(sharedViolations(sandbox, rows, batch)).toEqual([]);
        // One gallery for the fleet: a runner ending while batch-mates still run leaves it to the
        // last of them; whoever wrote it last wrote it with every item settled.
        const wrote = ends.filter((end) => /^gallery: \S+index\.html$/m.test(end.stdout));
        const left = ends.filter((end) =>
          /^gallery: left to the (other runner|\d other runners) of this batch/m.test(end.stdout),
        );
        expect(wrote.length + left.length, said.join('\n---\n')).toBe(RUNNERS);
        expect(wrote.length).toBeGreaterThan(0);
        leftTotal += left.length;
        const page = readFileSync(join(p.dir, wrote[0]!.stdout.match(/^gallery: (\S+)$/m)![1]!), 'utf8');
        for (let i = 0; i < ITEMS; i += 1) expect(page).toContain(`f${i}`);
      }
      // Runners end one after another: over the rounds, some end while a batch-mate still runs.
      expect(leftTotal).toBeGreaterThan(0);
    } finally {
      await sandbox.close();
    }
  }, 300_000);
});
