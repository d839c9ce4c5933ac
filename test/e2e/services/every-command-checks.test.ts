import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  type E2eProject,
  filesBelow,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';

/**
 * Issue cases 4 and 5: `import` binds the ledger to the service it imported from, and `plan`
 * refuses what `run`'s pre-flight refuses, with the same words and exit code, sending nothing.
 */

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function sandbox(): Promise<SandboxHandle> {
  const handle = await startTestSandbox();
  cleanup.push(() => handle.close());
  return handle;
}

function twoItems(name: string): E2eProject {
  return project(
    name,
    `${manifestYaml(name)}items:\n  - {id: a, prompt: "shot a"}\n  - {id: b, prompt: "shot b"}\n`,
  );
}

function hashes(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  return Object.fromEntries(
    // The folder's owner marker (written by import's claim) is bookkeeping, not an output.
    filesBelow(dir)
      .sort()
      .map((name) => [
        name,
        createHash('sha256')
          .update(readFileSync(join(dir, name)))
          .digest('hex'),
      ]),
  );
}

const cli = (args: string[], p: E2eProject, env: Record<string, string>) => runCli(args, { cwd: p.dir, env });
const fast = { MEDIABATCH_PREFLIGHT_SECONDS: '0.3' };

describe('import binds the ledger like run (case 4)', () => {
  it('imports from one service, then run and plan against another are refused (exit 2), nothing sent', async () => {
    const first = await sandbox();
    const other = await sandbox();
    const p = twoItems('bound');
    // The jobs exist on the first service; the ledger that knew them is lost.
    expect((await runAgainst(first, p)).code).toBe(0);
    rmSync(join(p.dir, '.mediabatch'), { recursive: true, force: true });
    const imported = await cli(['import', p.manifest], p, cliEnv(first));
    expect(imported.code, imported.stderr).toBe(0);
    expect(ledgerRows<{ identity: string }>(p, 'SELECT identity FROM service')).toEqual([
      { identity: first.baseUrl },
    ]);
    const status = await cli(['status', p.manifest], p, {});
    expect(status.stdout).toContain(`service: ${first.baseUrl}`);
    expect(status.stdout).not.toContain('none yet');
    // Sidecars, like a run's, beside each imported file.
    expect(Object.keys(hashes(p.outDir))).toEqual(['a.json', 'a.mp4', 'b.json', 'b.mp4']);
    const before = hashes(p.outDir);

    for (const command of ['run', 'plan']) {
      const refused = await cli([command, p.manifest, '--base-url', other.baseUrl], p, {
        MEDIAGEN_API_KEY: other.apiKey,
      });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`belongs to ${first.baseUrl}, not ${other.baseUrl}`);
      expect(refused.stdout).not.toContain('nothing to submit');
    }
    expect(other.records().requests).toHaveLength(0);
    expect(hashes(p.outDir)).toEqual(before);
  });

  it('refuses to import into a ledger bound to another service (exit 2), listing nothing there', async () => {
    const first = await sandbox();
    const other = await sandbox();
    const p = twoItems('twice');
    // The first service holds no job of the manifest: the import records none, but binds the ledger.
    const empty = await cli(['import', p.manifest], p, cliEnv(first));
    expect(empty.code, empty.stderr).toBe(0);
    expect(ledgerRows<{ n: number }>(p, 'SELECT COUNT(*) AS n FROM attempts')).toEqual([{ n: 0 }]);
    const refused = await cli(['import', p.manifest], p, cliEnv(other));
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`belongs to ${first.baseUrl}, not ${other.baseUrl}`);
    expect(other.records().requests).toHaveLength(0);
    expect(ledgerRows<{ identity: string }>(p, 'SELECT identity FROM service')).toEqual([
      { identity: first.baseUrl },
    ]);
  });

  it('import --sandbox rebuilds the sandbox ledger from the embedded sandbox', async () => {
    const p = twoItems('sbimport');
    const run = await cli(['run', p.manifest, '--sandbox', '--poll-interval', '0.1'], p, {});
    expect(run.code, run.stderr).toBe(0);
    const ledger = join(p.dir, '.mediabatch', 'sandbox', 'sbimport.sqlite');
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${ledger}${suffix}`, { force: true });
    const imported = await cli(['import', p.manifest, '--sandbox'], p, {});
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('Every item is done.');
    expect(imported.stdout).toMatch(/net spend \$\d+\.\d\d\./);
    const plan = await cli(['plan', p.manifest, '--sandbox'], p, {});
    expect(plan.stdout).toContain('Plan: nothing to submit, 2 unchanged.');
  });
});

describe('plan predicts run (case 5)', () => {
  it('without /v1: the same hint and exit 2 as run, and only GET /account was sent', async () => {
    const service = await sandbox();
    const p = twoItems('nov1');
    const bare = service.baseUrl.replace(/\/v1$/, '');
    const env = { MEDIAGEN_API_KEY: service.apiKey, ...fast };
    const plan = await cli(['plan', p.manifest, '--base-url', bare], p, env);
    const run = await cli(['run', p.manifest, '--base-url', bare], p, env);
    expect(plan.code, plan.stderr).toBe(2);
    expect(run.code, run.stderr).toBe(2);
    const hint = `did you mean --base-url ${service.baseUrl} ?`;
    expect(plan.stderr).toContain(hint);
    expect(run.stderr).toContain(hint);
    expect(plan.stderr).toContain('run would stop here');
    expect(plan.stdout).toBe('');
    expect(allPosts(service)).toHaveLength(0);
    expect(service.records().requests.every((request) => request.method === 'GET')).toBe(true);
  });

  it('after a lost ledger, plan refuses (exit 2) instead of pricing items run would refuse', async () => {
    const service = await sandbox();
    const p = twoItems('lostplan');
    expect((await runAgainst(service, p)).code).toBe(0);
    const posts = allPosts(service).length;
    const files = hashes(p.outDir);
    rmSync(join(p.dir, '.mediabatch'), { recursive: true, force: true });
    const plan = await cli(['plan', p.manifest], p, cliEnv(service));
    const run = await cli(['run', p.manifest], p, cliEnv(service));
    expect(plan.code, plan.stderr).toBe(2);
    expect(run.code, run.stderr).toBe(2);
    expect(plan.stdout).not.toMatch(/expected \$/);
    expect(plan.stderr).toContain('the service already holds jobs of lostplan');
    expect(plan.stderr).toContain(`mediabatch import ${p.manifest}`);
    expect(allPosts(service)).toHaveLength(posts);
    expect(hashes(p.outDir)).toEqual(files);
  });

  it('plan --sandbox reads the sandbox ledger and refuses a real ledger bound elsewhere', async () => {
    const p = twoItems('sbx');
    const run = await cli(['run', p.manifest, '--sandbox', '--poll-interval', '0.1'], p, {});
    expect(run.code, run.stderr).toBe(0);
    const plan = await cli(['plan', p.manifest, '--sandbox'], p, {});
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('Plan: nothing to submit, 2 unchanged.');
    expect(plan.stdout).toContain('service: the embedded sandbox');
    // The sandbox ledger named as the real one: bound to the sandbox, refused against a URL.
    const service = await sandbox();
    const sandboxLedger = join(p.dir, '.mediabatch', 'sandbox', 'sbx.sqlite');
    const wrong = await cli(['plan', p.manifest, '--ledger', sandboxLedger], p, cliEnv(service));
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('belongs to the embedded sandbox');
    expect(service.records().requests).toHaveLength(0);
  });
});
