import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';

/**
 * After copy-ledger from a shared PostgreSQL ledger to SQLite, the output folder belongs to the
 * copy (runs go on there). The old ledger still records the batch, and a read-only command reads
 * it, saying first that it no longer owns the folder; plan, which says what run would do, refuses
 * it as run would.
 */
const NAME = 'moved';

describe.skipIf(skipPostgresTests)('reading the ledger a batch was copied from', () => {
  const postgres = usePostgresServer();

  it('status and export read it with a first line that says the copy owns the folder; plan refuses', async () => {
    const url = await postgres.server.createDatabase('moved');
    const sandbox = await startTestSandbox();
    try {
      const p = project(
        NAME,
        `${manifestYaml(NAME)}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`,
      );
      const cli = (args: string[]) => runCli(args, { cwd: p.dir, env: cliEnv(sandbox) });
      const ran = await cli(['run', 'batch.yaml', '--ledger', url, '--poll-interval', '0.1']);
      expect(ran.code, ran.stderr).toBe(0);
      const copied = await cli(['copy-ledger', 'batch.yaml', '--ledger', url, '--to', 'copy.sqlite']);
      expect(copied.code, copied.stderr).toBe(0);
      expect(copied.stdout).toContain('now belongs to the copy');

      const note =
        "note: this ledger no longer owns the output folder out/moved: moved's ledger copy.sqlite does (a copy-ledger passes it to the copy), and runs go on there (--ledger copy.sqlite); shown as this ledger recorded it";
      const status = await cli(['status', 'batch.yaml', '--ledger', url]);
      expect(status.code, status.stderr).toBe(0);
      const [first, , ...rest] = status.stdout.split('\n');
      expect(first).toBe(note);
      expect(rest.join('\n')).toContain('moved: 2 items: 2 done');
      expect(status.stderr).toBe('');
      expect(status.stdout).not.toContain(postgres.server.password);

      const json = await cli(['status', 'batch.yaml', '--ledger', url, '--json']);
      expect(json.code, json.stderr).toBe(0);
      expect(json.stderr).toBe(`mediabatch status: ${note}\n`);
      expect(JSON.parse(json.stdout).totals.done).toBe(2);

      const exported = await cli(['export', 'batch.yaml', '--ledger', url]);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stderr.split('\n')[0]).toBe(`mediabatch export: ${note.replace('note: ', '')}`);
      expect(
        exported.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).state),
      ).toEqual(['done', 'done']);

      // plan says what run would do, and run would refuse the folder to this ledger.
      const plan = await cli(['plan', 'batch.yaml', '--ledger', url]);
      expect(plan.code).toBe(2);
      expect(plan.stderr).toContain("the output folder out/moved belongs to moved's ledger copy.sqlite");
    } finally {
      await sandbox.close();
    }
  });
});
