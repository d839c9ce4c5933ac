import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';

/**
 * A runner without the manifest names its shared batch by name (`--batch NAME`): a name the
 * database does not define is answered with the closest one it does, and the batches it defines
 * when they are few, so a typo is not taken for a batch nobody ran yet.
 */
describe.skipIf(skipPostgresTests)('a shared batch named with a typo', () => {
  const postgres = usePostgresServer();

  it('status --batch pgshot suggests pgshots and lists the batches the database defines', async () => {
    const url = await postgres.server.createDatabase('names');
    const sandbox = await startTestSandbox();
    try {
      const env = cliEnv(sandbox);
      const hosts = ['pgshots', 'teasers'].map((name) =>
        project(name, `${manifestYaml(name)}items:\n  - {id: a, prompt: one}\n`),
      );
      for (const host of hosts) {
        const ran = await runCli(['run', host.manifest, '--ledger', url, '--poll-interval', '0.1'], {
          cwd: host.dir,
          env,
        });
        expect(ran.code, ran.stderr).toBe(0);
      }
      const shots = hosts[0]!;
      const requests = sandbox.records().requests.length;
      const status = (batch: string) =>
        runCli(['status', '--batch', batch, '--ledger', url, '--output-dir', shots.outDir], {
          cwd: shots.dir,
          env: {},
        });

      const typo = await status('pgshot');
      expect(typo.code).toBe(2);
      expect(typo.stdout).toBe('');
      expect(typo.stderr).toContain(
        'holds no definition of batch "pgshot", did you mean "pgshots"? (the batches it defines: pgshots, teasers); no status can be shown; nothing was changed',
      );
      expect(typo.stderr).not.toContain(postgres.server.password);

      const unknown = await status('trailers');
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(
        'holds no definition of batch "trailers" (the batches it defines: pgshots, teasers): no runner has run it',
      );

      const right = await status('pgshots');
      expect(right.code, right.stderr).toBe(0);
      expect(right.stdout).toContain('pgshots: 1 items: 1 done');
      expect(sandbox.records().requests.length).toBe(requests);
    } finally {
      await sandbox.close();
    }
  });
});
