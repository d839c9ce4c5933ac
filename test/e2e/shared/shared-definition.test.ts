import { describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../../support/cli.js';
import { allPosts, cliEnv, manifestYaml, project, startTestSandbox, waitUntil } from '../../support/e2e.js';
import { psql, skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { readSharedLedger } from './shared-support.js';

/**
 * One definition per shared batch (docs/shared-ledger.md): two hosts' copies of a manifest that
 * differ are not two batches with two budgets. Each "host" is its own project folder.
 */

const NAME = 'defined';
const HEAD = 'max_cost_usd: "0.10"\nconcurrency: 2\n';
const items = (prompts: Record<string, string>) =>
  `items:\n${Object.entries(prompts)
    .map(([id, prompt]) => `  - {id: ${id}, prompt: ${prompt}}`)
    .join('\n')}\n`;
const HOST_A = `${manifestYaml(NAME, `${HEAD}budget_usd: "5.00"\n`)}${items({ a: 'a fox', b: 'a hen', c: 'a cow' })}`;
const HOST_B = `${manifestYaml(NAME, `${HEAD}budget_usd: "0.30"\n`)}${items({ a: 'a fox', b: 'a red hen', c: 'a cow' })}`;

/** The batch's revisions as `revision|budget_micros` lines, read with plain SQL. */
async function revisions(url: string): Promise<string[]> {
  const out = await psql(
    url,
    `SELECT revision, budget_micros FROM batch_definitions d JOIN batches b ON b.id = d.batch_id WHERE b.name = '${NAME}' ORDER BY revision`,
  );
  return out.split('\n').filter(Boolean);
}

describe.skipIf(skipPostgresTests)('one definition per shared batch', () => {
  const postgres = usePostgresServer();

  it('a second host whose manifest differs in budget_usd and one prompt is refused before any request, naming both; plan says so; the same definition in other text runs', async () => {
    const url = await postgres.server.createDatabase('definition');
    const sandbox = await startTestSandbox();
    try {
      const a = project(NAME, HOST_A);
      const env = cliEnv(sandbox);
      const first = await runCli(['run', a.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: a.dir,
        env,
      });
      expect(first.code, first.stderr).toBe(0);
      expect(await revisions(url)).toEqual(['1|5000000']);
      const requests = sandbox.records().requests.length;

      const b = project(NAME, HOST_B);
      const refused = await runCli(['run', b.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: b.dir,
        env,
      });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('budget_usd is $5.00 in the batch, $0.30 here');
      expect(refused.stderr).toContain('items changed: b (input.prompt)');
      expect(refused.stderr).toContain('--redefine');
      expect(refused.stderr).toContain('nothing was submitted');
      // Before any request to the service: not even the pre-flight's GET.
      expect(sandbox.records().requests.length).toBe(requests);

      const planned = await runCli(['plan', b.manifest, '--ledger', url], { cwd: b.dir, env: {} });
      expect(planned.code, planned.stderr).toBe(0);
      expect(planned.stdout).toContain('run would refuse this manifest (definition_differs)');
      expect(planned.stdout).toContain('budget_usd is $5.00 in the batch, $0.30 here');
      const preview = await runCli(['plan', b.manifest, '--ledger', url, '--redefine'], {
        cwd: b.dir,
        env: {},
      });
      expect(preview.stdout).toContain('--redefine: run would make this manifest revision 2');

      // The same definition written otherwise: keys reordered, comments, the items in a CSV.
      const c = project(
        NAME,
        `# the same batch, written by another hand\nname: ${NAME}\nversion: 1\nbudget_usd: "5.00"  # five dollars\n` +
          `concurrency: 2\nmax_cost_usd: "0.10"\ninput: {definition: 480p, seconds: 2}\nitems_from: prompts.csv\n`,
        { 'prompts.csv': 'prompt,id\na cow,c\na fox,a\na hen,b\n' },
      );
      const same = await runCli(['run', c.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: c.dir,
        env,
      });
      expect(same.code, same.stderr).toBe(0);
      expect(allPosts(sandbox)).toHaveLength(3);
      expect(await revisions(url)).toHaveLength(1);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('--redefine makes the manifest the next revision, whose budget then binds', async () => {
    const url = await postgres.server.createDatabase('redefine');
    const sandbox = await startTestSandbox();
    try {
      const env = cliEnv(sandbox);
      const a = project(NAME, HOST_A);
      expect(
        (await runCli(['run', a.manifest, '--ledger', url, '--poll-interval', '0.1'], { cwd: a.dir, env }))
          .code,
      ).toBe(0);
      const spent = (await readSharedLedger(url, NAME)).attempts.reduce(
        (sum, row) => sum + row.amount_micros,
        0,
      );
      expect(spent).toBeGreaterThan(0);

      const b = project(
        NAME,
        HOST_B.replace('budget_usd: "0.30"', `budget_usd: "${(spent / 1e6).toFixed(6)}"`),
      );
      const redefined = await runCli(
        ['run', b.manifest, '--ledger', url, '--poll-interval', '0.1', '--redefine'],
        {
          cwd: b.dir,
          env,
        },
      );
      expect(redefined.stdout).toContain('is now the definition of batch "defined" (revision 2)');
      // The new budget is all spent already: b's new prompt is not paid for (its take is kept).
      expect(redefined.code, redefined.stderr).toBe(0);
      expect(redefined.stdout).toContain('$0.00 is left of budget_usd');
      expect(allPosts(sandbox)).toHaveLength(3);
      expect(await revisions(url)).toEqual(['1|5000000', `2|${spent}`]);
      // The old copy is now the one refused.
      const old = await runCli(['run', a.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: a.dir,
        env,
      });
      expect(old.code).toBe(2);
      expect(old.stderr).toContain('(revision 2)');
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('a runner on the old revision while another redefines stops submitting, saves what it has in flight and exits 2 with the words', async () => {
    const url = await postgres.server.createDatabase('underway');
    const sandbox = await startTestSandbox({ running_seconds: { min: 0.8, max: 1.2 } });
    try {
      const env = cliEnv(sandbox);
      const many = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`s${i}`, `scene ${i}`]));
      const a = project(NAME, `${manifestYaml(NAME, `${HEAD}budget_usd: "5.00"\n`)}${items(many)}`);
      const runner = spawnCli(['run', a.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: a.dir,
        env,
        timeoutMs: 60_000,
      });
      await waitUntil(() => allPosts(sandbox).length >= 2, 20_000, 'the first runner to submit');
      const b = project(NAME, `${manifestYaml(NAME, `${HEAD}budget_usd: "4.00"\n`)}${items(many)}`);
      const redefined = await runCli(
        ['run', b.manifest, '--ledger', url, '--poll-interval', '0.1', '--redefine', '--only', 's0'],
        { cwd: b.dir, env },
      );
      expect(redefined.stdout).toContain('(revision 2)');
      const ended = await runner.done;
      expect(ended.code, ended.stderr).toBe(2);
      const said = ended.stdout + ended.stderr;
      expect(said).toContain('stopping: the batch was redefined while this run worked on revision 1');
      expect(said).toContain('budget_usd is $4.00 in the batch, $5.00 here');
      expect(said).toContain('--redefine');
      // Nothing it had paid for is lost: every accepted job of the batch has its file saved.
      const rows = await readSharedLedger(url, NAME);
      const accepted = rows.attempts.filter((row) => row.state === 'accepted');
      const saved = new Set(rows.files.map((file) => file.attempt_id));
      expect(accepted.filter((row) => !saved.has(row.id)).map((row) => row.item_id)).toEqual([]);
      expect(rows.items.some((item) => item.state === 'pending')).toBe(true);
    } finally {
      await sandbox.close();
    }
  }, 90_000);
});
