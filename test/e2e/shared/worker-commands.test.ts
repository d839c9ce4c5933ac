import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { allPosts, cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { tempDir } from '../../support/temp.js';

/**
 * The worker form of every command that reads a batch (docs/shared-ledger.md, "Adding a
 * machine"): `audit`, `export`, `report` and `keep` with `--batch NAME` and no manifest, as `run`,
 * `plan` and `status` take it; and a ledger copied with copy-ledger, definitions and all, runs as
 * a worker at once (issue 52, part 3).
 */

const NAME = 'workers';
const YAML =
  `${manifestYaml(NAME, 'budget_usd: "5.00"\nmax_cost_usd: "0.10"\nconcurrency: 2\n')}` +
  'items:\n  - {id: a, prompt: "scene a"}\n  - {id: b, prompt: "scene b"}\n' +
  '  - {id: twin, prompt: "two takes", variants: 2}\n';
const ALL = ['a', 'b', 'twin', 'twin.v2'];

describe.skipIf(skipPostgresTests)('the worker form of every reading command', () => {
  const postgres = usePostgresServer();

  it('audit, export, report and keep read a shared batch from the ledger alone', async () => {
    const url = await postgres.server.createDatabase('readers');
    const sandbox = await startTestSandbox();
    try {
      const env = cliEnv(sandbox);
      const host = project(NAME, YAML);
      const first = await runCli(['run', host.manifest, '--ledger', url, '--poll-interval', '0.1'], {
        cwd: host.dir,
        env,
      });
      expect(first.code, first.stderr).toBe(0);
      const worker = tempDir();
      const args = ['--ledger', url, '--batch', NAME, '--output-dir', host.outDir];
      const cli = (command: string[], withService = false) =>
        runCli([...command, ...args], { cwd: worker, env: withService ? env : {} });

      const audit = await cli(['audit', '--json'], true);
      expect(audit.code, audit.stderr).toBe(0);
      expect(JSON.parse(audit.stdout)).toMatchObject({ agrees: true });

      const exported = await cli(['export']);
      expect(exported.code, exported.stderr).toBe(0);
      const records = exported.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string; state: string });
      expect(records.map((record) => [record.id, record.state])).toEqual(ALL.map((id) => [id, 'done']));

      const report = await cli(['report']);
      expect(report.code, report.stderr).toBe(0);
      expect(report.stdout).toContain('4 done');
      const page = join(worker, 'page.html');
      const html = await cli(['report', '--html', page]);
      expect(html.code, html.stderr).toBe(0);
      expect(readFileSync(page, 'utf8')).toContain('twin.v2');

      const kept = await cli(['keep', 'twin:2']);
      expect(kept.code, kept.stderr).toBe(0);
      const keptExport = await cli(['export', '--kept']);
      expect(keptExport.code, keptExport.stderr).toBe(0);
      const keptTwin = keptExport.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string; variant?: number })
        .find((record) => record.id === 'twin');
      expect(keptTwin, keptExport.stdout).toMatchObject({ variant: 2 });
      // keep's entries still follow the flag; none is refused as keep without --batch refuses it.
      const none = await cli(['keep']);
      expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('missing <ID:VARIANT[.TAKE]>')]);

      // Nothing was sent by the readers (audit reads with GETs only) and nothing written where they ran
      // but the page asked for.
      expect(allPosts(sandbox)).toHaveLength(ALL.length);
      expect(readdirSync(worker)).toEqual(['page.html']);
    } finally {
      await sandbox.close();
    }
  }, 120_000);

  it('a ledger copied into another database runs as a worker at once: its definitions came with it', async () => {
    const from = await postgres.server.createDatabase('copied_from');
    const to = await postgres.server.createDatabase('copied_to');
    const sandbox = await startTestSandbox();
    try {
      const env = cliEnv(sandbox);
      const host = project(NAME, YAML);
      const first = await runCli(
        ['run', host.manifest, '--ledger', from, '--poll-interval', '0.1', '--only', 'a'],
        { cwd: host.dir, env },
      );
      expect(first.code, first.stderr).toBe(0);
      const copied = await runCli(['copy-ledger', host.manifest, '--ledger', from, '--to', to], {
        cwd: host.dir,
        env: {},
      });
      expect(copied.code, copied.stderr).toBe(0);

      const worker = tempDir();
      const args = ['--ledger', to, '--batch', NAME, '--output-dir', host.outDir];
      const ran = await runCli(['run', ...args, '--poll-interval', '0.1'], { cwd: worker, env });
      expect(ran.code, ran.stderr).toBe(0);
      expect(allPosts(sandbox)).toHaveLength(ALL.length);
      for (const id of ALL) expect(existsSync(join(host.outDir, `${id}.mp4`)), id).toBe(true);
      const status = await runCli(['status', ...args, '--json'], { cwd: worker, env: {} });
      const doc = JSON.parse(status.stdout) as { items: Array<{ state: string }> };
      expect(doc.items.map((item) => item.state)).toEqual(ALL.map(() => 'done'));
      expect(readdirSync(worker)).toEqual([]);
    } finally {
      await sandbox.close();
    }
  }, 120_000);
});
