import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { allPosts, cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';

/**
 * An approved plan holds for the service it was made against: one made on the embedded sandbox
 * (its own ledger and output folder) and run against the service is refused as made for another
 * service, and the other way round, never as "the manifest changed". The plan records its service.
 */
const MANIFEST = `${manifestYaml('crossed', 'max_cost_usd: "0.05"\n')}items:\n  - {id: a, prompt: first}\n`;

describe('an approved plan and the service it was made against', () => {
  it('a sandbox plan run against the service, and a service plan run on the sandbox, are refused naming both', async () => {
    const sandbox = await startTestSandbox();
    try {
      const p = project('crossed', MANIFEST);
      const cli = (args: string[]) => runCli(args, { cwd: p.dir, env: cliEnv(sandbox) });

      const onSandbox = await cli(['plan', 'batch.yaml', '--sandbox', '--out', 'sandbox-plan.json']);
      expect(onSandbox.code, onSandbox.stderr).toBe(0);
      expect(JSON.parse(readFileSync(join(p.dir, 'sandbox-plan.json'), 'utf8')).service).toBe(
        'sandbox:embedded',
      );
      const crossed = await cli(['run', 'batch.yaml', '--plan', 'sandbox-plan.json']);
      expect(crossed.code).toBe(2);
      expect(crossed.stderr).toContain(
        `is not what run would do now: the plan was made against the embedded sandbox (--sandbox), and this run is against ${sandbox.baseUrl}: a plan holds only for the service it was made against, whose ledger, prices and output folder it was made from; make the plan again against ${sandbox.baseUrl} (without --sandbox). Nothing was sent`,
      );
      expect(crossed.stderr).not.toContain('the manifest changed');

      const onService = await cli(['plan', 'batch.yaml', '--out', 'service-plan.json']);
      expect(onService.code, onService.stderr).toBe(0);
      expect(JSON.parse(readFileSync(join(p.dir, 'service-plan.json'), 'utf8')).service).toBe(
        sandbox.baseUrl,
      );
      const back = await cli(['run', 'batch.yaml', '--sandbox', '--plan', 'service-plan.json']);
      expect(back.code).toBe(2);
      expect(back.stderr).toContain(
        `the plan was made against ${sandbox.baseUrl}, and this run is against the embedded sandbox (--sandbox)`,
      );
      expect(back.stderr).toContain('make the plan again with --sandbox to try it there');
      expect(allPosts(sandbox)).toEqual([]);

      // Each plan runs against its own service.
      const ran = await cli(['run', 'batch.yaml', '--plan', 'service-plan.json', '--poll-interval', '0.1']);
      expect(ran.code, ran.stderr).toBe(0);
      expect(allPosts(sandbox)).toHaveLength(1);
      const tried = await cli(['run', 'batch.yaml', '--sandbox', '--plan', 'sandbox-plan.json']);
      expect(tried.code, tried.stderr).toBe(0);
      expect(allPosts(sandbox)).toHaveLength(1);
    } finally {
      await sandbox.close();
    }
  });
});
