import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { allPosts, cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { tempDir } from '../../support/temp.js';
import { readSharedLedger, sharedViolations } from './shared-support.js';

/**
 * Adding a machine (docs/shared-ledger.md): a worker with no copy of the manifest runs the shared
 * batch's current revision from the ledger alone, `run --ledger URL --batch NAME --output-dir DIR`,
 * saving into the folder the batch shares, each item paid once.
 */

const NAME = 'worked';
const IDS = ['a', 'b', 'c', 'd', 'e'];
const YAML =
  `${manifestYaml(NAME, 'budget_usd: "5.00"\nmax_cost_usd: "0.10"\nconcurrency: 2\nretries: 1\n')}` +
  `items:\n${IDS.map((id) => `  - {id: ${id}, prompt: "scene ${id}"}`).join('\n')}\n` +
  '  - {id: twin, prompt: "two takes of {what}", vars: {what: a lake}, variants: 2}\n';
const ALL = [...IDS, 'twin', 'twin.v2'];

describe.skipIf(skipPostgresTests)('a worker without the manifest', () => {
  const postgres = usePostgresServer();

  it('runs the rest of a batch from the ledger alone, into the shared folder, each item paid once', async () => {
    const url = await postgres.server.createDatabase('worker');
    const sandbox = await startTestSandbox();
    try {
      const env = cliEnv(sandbox);
      const host = project(NAME, YAML);
      // The first runner, with the manifest, defines the batch and runs one item of it.
      const first = await runCli(
        ['run', host.manifest, '--ledger', url, '--poll-interval', '0.1', '--only', 'a'],
        {
          cwd: host.dir,
          env,
        },
      );
      expect(first.code, first.stderr).toBe(0);
      expect(allPosts(sandbox)).toHaveLength(1);

      // The worker: an empty folder, the ledger, the batch's name and where the shared folder is.
      const worker = tempDir();
      const args = ['--ledger', url, '--batch', NAME, '--output-dir', host.outDir];
      // plan, from the ledger alone, says what the worker's run would do.
      const plan = await runCli(['plan', ...args], { cwd: worker, env: {} });
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toContain('Plan: 6 new, 1 unchanged');
      expect(plan.stdout).not.toContain(postgres.server.password);
      const ran = await runCli(['run', ...args, '--poll-interval', '0.1'], { cwd: worker, env });
      expect(ran.code, ran.stderr).toBe(0);
      expect(`${ran.stdout}${ran.stderr}`).not.toContain(postgres.server.password);

      // Every item done, each paid once; the files in the shared folder, recorded as the host
      // records them (relative to its manifest's folder); nothing written where the worker ran.
      const rows = await readSharedLedger(url, NAME);
      expect(rows.items.map((item) => item.item_id).sort()).toEqual([...ALL].sort());
      const batch = { name: NAME, dir: host.dir, budgetMicros: 5_000_000, concurrency: 2 };
      expect(sharedViolations(sandbox, rows, batch)).toEqual([]);
      expect(allPosts(sandbox)).toHaveLength(ALL.length);
      for (const id of ALL) expect(existsSync(join(host.outDir, `${id}.mp4`)), id).toBe(true);
      expect(readdirSync(worker)).toEqual([]);

      // status from the ledger alone sees the same batch; the host's copy has nothing left to do.
      const status = await runCli(['status', ...args, '--json', '--verify'], { cwd: worker, env: {} });
      expect(status.code, status.stderr).toBe(0);
      const doc = JSON.parse(status.stdout) as { items: Array<{ id: string; state: string }> };
      expect(doc.items.filter((item) => item.state !== 'done')).toEqual([]);
      expect(doc.items).toHaveLength(ALL.length);
      // Deleted sidecars come back as they were, each take's check in it (read for all the takes
      // verified at once, verify-saved.ts).
      const sidecars = new Map(
        ['a', 'twin'].map((id) => [id, readFileSync(join(host.outDir, `${id}.json`), 'utf8')]),
      );
      for (const [id, text] of sidecars) {
        expect(JSON.parse(text).check, id).toEqual({ outcome: 'passed', reason: null });
        unlinkSync(join(host.outDir, `${id}.json`));
      }
      const again = await runCli(['run', host.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: host.dir,
        env,
      });
      expect(again.code, again.stderr).toBe(0);
      expect(allPosts(sandbox)).toHaveLength(ALL.length);
      for (const [id, text] of sidecars)
        expect(readFileSync(join(host.outDir, `${id}.json`), 'utf8'), id).toBe(text);
    } finally {
      await sandbox.close();
    }
  }, 90_000);

  it('refuses before any request: no output location, the wrong one, an unknown batch, no shared ledger', async () => {
    const url = await postgres.server.createDatabase('refused');
    const sandbox = await startTestSandbox();
    try {
      const env = cliEnv(sandbox);
      const host = project(NAME, YAML);
      const first = await runCli(
        ['run', host.manifest, '--ledger', url, '--poll-interval', '0.1', '--only', 'a'],
        {
          cwd: host.dir,
          env,
        },
      );
      expect(first.code, first.stderr).toBe(0);
      const requests = sandbox.records().requests.length;
      const worker = tempDir();
      const refused = async (args: string[]) => {
        const result = await runCli(['run', ...args, '--poll-interval', '0.1'], { cwd: worker, env });
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).not.toContain(postgres.server.password);
        return result.stderr;
      };

      const unplaced = await refused(['--ledger', url, '--batch', NAME]);
      expect(unplaced).toContain(`saves to out/${NAME}, a folder relative to the manifest's`);
      expect(unplaced).toContain('give --output-dir');
      expect(unplaced).toContain('nothing was submitted');
      const elsewhere = await refused(['--ledger', url, '--batch', NAME, '--output-dir', worker]);
      expect(elsewhere).toContain(
        `--output-dir must be that folder on this machine, a path ending in out/${NAME}`,
      );
      const absent = await refused([
        '--ledger',
        url,
        '--batch',
        NAME,
        '--output-dir',
        join(worker, 'out', NAME),
      ]);
      expect(absent).toContain('is not a folder on this machine');

      const unknown = await refused(['--ledger', url, '--batch', 'shots', '--output-dir', host.outDir]);
      expect(unknown).toContain('holds no definition of batch "shots"');
      expect(unknown).toContain('Run it once with its manifest and this --ledger');
      const noLedger = await refused(['--batch', NAME, '--output-dir', host.outDir]);
      expect(noLedger).toContain('give --ledger, its postgres:// URL');
      const both = await refused([host.manifest, '--ledger', url, '--batch', NAME]);
      expect(both).toContain('give <manifest> or --batch, not both');
      const outputWithManifest = await refused([host.manifest, '--ledger', url, '--output-dir', host.outDir]);
      expect(outputWithManifest).toContain('--output-dir goes with --batch');

      expect(sandbox.records().requests.length).toBe(requests);
      expect(readdirSync(worker)).toEqual([]);
      // status of an unknown batch is refused too, with the same words.
      const status = await runCli(['status', '--ledger', url, '--batch', 'shots'], { cwd: worker, env: {} });
      expect(status.code).toBe(2);
      expect(status.stderr).toContain('holds no definition of batch "shots"');
    } finally {
      await sandbox.close();
    }
  }, 60_000);
});
