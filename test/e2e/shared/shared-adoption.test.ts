import { describe, expect, it } from 'vitest';
import { spawnCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startClockedSandbox, waitUntil } from '../../support/e2e.js';
import { psql, skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { readSharedLedger } from './shared-support.js';

/**
 * An item one runner gave up on is failed for every runner of that run (docs/shared-ledger.md,
 * "A failure is final for the runners at work"): a runner that waited for it while the other
 * worked it reads it again when its lease goes, and leaves it failed. Each step is driven: the
 * sandbox's clock moves only when the test moves it, so no step depends on who is faster.
 */
describe.skipIf(skipPostgresTests)('a failure on a shared batch', () => {
  const postgres = usePostgresServer();

  it('a runner that adopts an item another runner gave up on does not send it again in the same run', async () => {
    const url = await postgres.server.createDatabase('adoption');
    const { sandbox, advance } = await startClockedSandbox({ running_seconds: { min: 0.1, max: 0.2 } });
    const name = 'shared-gave-up';
    // Its first three jobs fail, each after a minute of the sandbox's time; a fourth would succeed.
    const p = project(
      name,
      `${manifestYaml(name)}items:\n  - {id: doomed, prompt: "[[fail:processing_failedx3]] [[run:60]] a doomed scene"}\n`,
    );
    const args = ['run', p.manifest, '--ledger', url, '--poll-interval', '0.1', '--json'];
    const jobs = () => sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name);
    try {
      const first = spawnCli(args, { cwd: p.dir, env: cliEnv(sandbox), timeoutMs: 60_000 });
      await waitUntil(() => jobs().length === 1, 20_000, "the first runner's first job");
      const second = spawnCli(args, { cwd: p.dir, env: cliEnv(sandbox), timeoutMs: 60_000 });
      // The second runner is in its loop, waiting for the item the first holds, once its
      // heartbeat has moved: runners beat it only at their turns, after the start's reading.
      const beat = () =>
        psql(url, `SELECT coalesce(max(heartbeat_at)::text, '') FROM runs WHERE pid = ${second.child.pid}`);
      const started = await (async () => {
        await waitUntil(async () => (await beat()) !== '', 20_000, "the second runner's start");
        return beat();
      })();
      await waitUntil(async () => (await beat()) !== started, 20_000, "the second runner's first turn");
      // Three failures in a row, one at a time.
      for (let failures = 1; failures <= 3; failures += 1) {
        await waitUntil(() => jobs().length === failures, 20_000, `job ${failures}`);
        advance(61);
        await waitUntil(
          () => jobs().filter((job) => job.status === 'failed').length === failures,
          20_000,
          `failure ${failures}`,
        );
      }
      const [one, two] = await Promise.all([first.done, second.done]);
      expect(jobs().map((job) => job.status)).toEqual(['failed', 'failed', 'failed']);
      const rows = await readSharedLedger(url, name);
      expect(rows.items).toEqual([{ item_id: 'doomed', state: 'failed' }]);
      expect([one.code, two.code], `${one.stderr}\n---\n${two.stderr}`).toEqual([1, 1]);
      for (const end of [one, two]) {
        const report = JSON.parse(end.stdout) as {
          items: Array<{ id: string; error: { code: string } | null }>;
        };
        expect(report.items.map((item) => [item.id, item.error?.code])).toEqual([
          ['doomed', 'retries_exhausted'],
        ]);
      }
      // A run started now is a new run: it tries the item again, with a fresh set of retries.
      const later = spawnCli(args, { cwd: p.dir, env: cliEnv(sandbox), timeoutMs: 60_000 });
      await waitUntil(() => jobs().length === 4, 20_000, "the later run's job");
      advance(61);
      expect((await later.done).code).toBe(0);
      expect(jobs().map((job) => job.status)).toEqual(['failed', 'failed', 'failed', 'succeeded']);
    } finally {
      await sandbox.close();
    }
  }, 90_000);
});
