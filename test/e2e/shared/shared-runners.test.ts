import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, spawnCli } from '../../support/cli.js';
import { cliEnv, filesBelow, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { psql, skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { seededRandom } from '../../support/seeded-random.js';
import { readSharedLedger, sharedViolations } from './shared-support.js';

const seed = Number(process.env.SHARED_SEED ?? Math.floor(Math.random() * 2 ** 31));

describe.skipIf(skipPostgresTests)('several runners on one shared PostgreSQL ledger', () => {
  const postgres = usePostgresServer();

  it('three runners, each killed with SIGKILL several times, then run to the end: one net charge per item, every file whole, budget and concurrency kept', async () => {
    const random = seededRandom(seed);
    const url = await postgres.server.createDatabase('shared');
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
        // Each runner in turn, at a random moment: every one dies three times.
        const index = kills % 3;
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
      expect(Math.min(...killsOf)).toBeGreaterThanOrEqual(3);
      const rows = await readSharedLedger(url, name);
      expect(rows.items).toHaveLength(30);
      // A job fails on the service one time in ten here, so an item may honestly fail: its three
      // attempts' jobs all failed (retries exhausted). A runner that ends while such an item is
      // failed ends with exit 1, even when a runner started after it retries the item (a new run
      // gives an item whose retries ran out a fresh set) and the item ends done. Any other item not
      // done, or any other exit, is a fault of ours.
      const jobs = new Map(sandbox.records().jobs.map((job) => [job.id, job]));
      const jobsOf = (itemId: string) =>
        rows.attempts
          .filter((each) => each.item_id === itemId && each.job_id !== null)
          .map((each) => jobs.get(each.job_id!)?.status);
      const retriesRanOut = (itemId: string) =>
        jobsOf(itemId).filter((status) => status === 'failed').length >= 3;
      for (const item of rows.items.filter((each) => each.state !== 'done')) {
        const tried = jobsOf(item.item_id);
        expect({
          item: item.item_id,
          state: item.state,
          allFailed: tried.every((status) => status === 'failed'),
        }).toEqual({ item: item.item_id, state: 'failed', allFailed: true });
        expect(retriesRanOut(item.item_id), `${item.item_id}: ${tried.join(', ')}`).toBe(true);
      }
      const honest = (end: CliResult) =>
        end.code === 0 ||
        (end.code === 1 &&
          notDoneIn(end).every(
            (item) =>
              item.state === 'failed' && item.error?.code === 'retries_exhausted' && retriesRanOut(item.id),
          ));
      const said = await Promise.all(ends.map((end, n) => runnerWords(url, end, n, honest(end))));
      expect(ends.every(honest), said.join('\n---\n')).toBe(true);
      const failedHonestly = new Set(
        rows.items.filter((each) => each.state !== 'done').map((each) => each.item_id),
      );
      const problems = sharedViolations(sandbox, rows, {
        name,
        dir: p.dir,
        budgetMicros,
        concurrency,
        failedHonestly,
      });
      expect(problems).toEqual([]);
    } finally {
      await sandbox.close();
    }
  }, 150_000);

  it('a runner whose database goes away mid-run stops submitting, resumes when it answers, and pays nothing twice', async () => {
    const url = await postgres.server.createDatabase('outage');
    const sandbox = await startTestSandbox({ running_seconds: { min: 0.3, max: 0.6 } });
    const name = 'db-outage';
    const items = Array.from({ length: 12 }, (_, i) => `  - {id: o${i}, prompt: scene ${i}}`);
    const p = project(name, `${manifestYaml(name, 'concurrency: 3\n')}items:\n${items.join('\n')}\n`);
    const env = { ...cliEnv(sandbox), MEDIABATCH_LEDGER_WAIT_SECONDS: '30' };
    try {
      const run = spawnCli(['run', p.manifest, '--ledger', url, '--poll-interval', '0.1', '--json'], {
        cwd: p.dir,
        env,
        timeoutMs: 60_000,
      });
      // Once jobs are under way, the database stops for two seconds.
      await waitFor(() => sandbox.records().jobs.length >= 3);
      await postgres.server.stopServer();
      const jobsWhileDown = sandbox.records().jobs.length;
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // Nothing new was submitted while the ledger could not record it first.
      expect(sandbox.records().jobs.length).toBeLessThanOrEqual(jobsWhileDown + 3);
      await postgres.server.startServer();
      const end = await run.done;
      expect(end.code).toBe(0);
      const rows = await readSharedLedger(url, name);
      const problems = sharedViolations(sandbox, rows, {
        name,
        dir: p.dir,
        budgetMicros: Number.POSITIVE_INFINITY,
        concurrency: 3,
      });
      expect(problems).toEqual([]);
      expect(
        sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name),
      ).toHaveLength(12);
    } finally {
      await sandbox.close();
    }
  }, 90_000);

  it('a runner whose output folder is on its own disk says so while a runner on another machine works the batch', async () => {
    const url = await postgres.server.createDatabase('unshared');
    const sandbox = await startTestSandbox();
    const name = 'pg-unshared';
    const p = project(name, `${manifestYaml(name)}items:\n  - {id: one, prompt: one}\n`);
    try {
      const env = cliEnv(sandbox);
      const first = await spawnCli(['run', p.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: p.dir,
        env,
      }).done;
      expect(first.code).toBe(0);
      expect(first.stderr).not.toContain('own disk');
      // A live runner of this batch on another machine, as its heartbeat in the ledger says.
      await psql(
        url,
        `INSERT INTO runs (batch_id, pid, runner, started_at, heartbeat_at)
           SELECT id, 1, 'render-farm-2:1:abcd', '2026-01-01T00:00:00Z', now() FROM batches WHERE name = '${name}'`,
      );
      const second = await spawnCli(['run', p.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: p.dir,
        env,
      }).done;
      expect(second.code).toBe(0);
      expect(second.stderr).toMatch(
        /out\/pg-unshared is on this machine's own disk \([^)]+\), while runners of this batch on render-farm-2 save to theirs/,
      );
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('the database password never reaches the output, the files, the events or the errors', async () => {
    const url = await postgres.server.createDatabase('secret');
    const sandbox = await startTestSandbox();
    const name = 'pg-secret';
    const p = project(
      name,
      `${manifestYaml(name)}items:\n  - {id: one, prompt: one}\n  - {id: two, prompt: two}\n`,
    );
    try {
      const env = cliEnv(sandbox);
      const ran = await spawnCli(['run', p.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: p.dir,
        env,
      }).done;
      expect(ran.code).toBe(0);
      const status = await spawnCli(['status', p.manifest, '--ledger', url, '--json'], { cwd: p.dir, env })
        .done;
      expect(status.code).toBe(0);
      const wrong = url.replace(`:${postgres.server.password}@`, ':not-the-password@');
      const refused = await spawnCli(['run', p.manifest, '--ledger', wrong], { cwd: p.dir, env }).done;
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/cannot open the ledger postgres:\/\/[^ ]*@127\.0\.0\.1/);
      const everything = [ran, status, refused].map((r) => r.stdout + r.stderr).join('\n');
      expect(everything).not.toContain(postgres.server.password);
      expect(everything).not.toContain('not-the-password');
      for (const file of filesBelow(p.dir))
        expect(readFileSync(join(p.dir, file)).toString('latin1')).not.toContain(postgres.server.password);
      const events = await psql(url, 'SELECT detail FROM events UNION ALL SELECT manifest_path FROM batches');
      expect(events).not.toContain(postgres.server.password);
    } finally {
      await sandbox.close();
    }
  }, 60_000);
});

interface ReportedItem {
  id: string;
  state: string;
  error: { code: string } | null;
}

/** The items a runner's report (`run --json`) shows not done when it ended. */
function notDoneIn(end: CliResult): ReportedItem[] {
  const { items = [] } = JSON.parse(end.stdout || '{}') as { items?: ReportedItem[] };
  return items.filter((item) => item.state !== 'done');
}

/**
 * What a runner said, and for one whose exit is not explained, the items its report shows not
 * done with their whole history in the ledger (events and attempts, in order).
 */
async function runnerWords(url: string, end: CliResult, n: number, explained: boolean): Promise<string> {
  const { items: _items, ...report } = JSON.parse(end.stdout || '{}') as Record<string, unknown>;
  const words = `runner ${n + 1}, exit ${end.code}: ${end.stderr.slice(-1500)}\n${JSON.stringify(report)}`;
  if (explained) return words;
  const notDone = notDoneIn(end);
  const ids = notDone.map((item) => `'${item.id}'`).join(',') || "''";
  const history = await psql(
    url,
    `SELECT e.id, e.at, e.item_id, e.attempt_id, e.kind, e.detail FROM events e WHERE e.item_id IN (${ids})
     UNION ALL SELECT -a.id, a.created_at, a.item_id, a.id, 'attempt ' || a.state || ' ' || coalesce(a.job_status, '-'), a.error_code
       FROM attempts a WHERE a.item_id IN (${ids}) ORDER BY 2, 1`,
  );
  return `${words}\nnot done in its report: ${JSON.stringify(notDone)}\n${history}`;
}

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
