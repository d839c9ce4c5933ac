import { copyFileSync, cpSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  cliEnv,
  type E2eProject,
  fastConfig,
  filesBelow,
  jobFetches,
  ledgerRows,
  requestsTo,
  runAgainst,
  sha256File,
  statusJson,
} from '../../support/e2e.js';
import { tempDir } from '../../support/temp.js';

/*
 * A ledger written before paths were relative (test/ledger/fixtures/v4-project, made by the code
 * of the time, with a take and sidecars), in a project that has moved since: the migration makes
 * its paths relative, and the project resumes without a POST or a download.
 */

const FIXTURE = resolve(import.meta.dirname, '../../ledger/fixtures/v4-project');

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/** The fixture laid out as a project in a new folder, and the sandbox state beside it. */
function fixtureProject(): { p: E2eProject; state: string } {
  const parent = tempDir('mediabatch-v4-');
  const dir = join(parent, 'moved');
  const p = {
    dir,
    manifest: join(dir, 'r.yaml'),
    ledger: join(dir, '.mediabatch', 'r.sqlite'),
    outDir: join(dir, 'out', 'r'),
  };
  mkdirSync(join(dir, '.mediabatch'), { recursive: true });
  copyFileSync(join(FIXTURE, 'r.yaml'), p.manifest);
  copyFileSync(join(FIXTURE, 'ledger.sqlite'), p.ledger);
  cpSync(join(FIXTURE, 'outputs'), p.outDir, { recursive: true });
  const state = join(parent, 'sandbox-state.jsonl');
  copyFileSync(join(FIXTURE, 'sandbox-state.jsonl'), state);
  return { p, state };
}

const hashes = (p: E2eProject) =>
  new Map(filesBelow(p.outDir).map((name) => [name, sha256File(join(p.outDir, name))]));

describe('a ledger from before relative paths, in a moved project', () => {
  it('is migrated and resumes with no POST, no download, every file its own', async () => {
    const { p, state } = fixtureProject();
    // The sandbox that made the fixture, its jobs and all, 49 hours on: past the 48 h retention,
    // so an output not found where the ledger says could never be fetched again.
    sandbox = await startSandbox(fastConfig(), {
      port: 0,
      statePath: state,
      now: () => Date.now() + 49 * 3600_000,
    });
    const s = sandbox;
    // Bound to the port that sandbox had; the same service here has another one.
    const db = new Database(p.ledger);
    db.prepare('UPDATE service SET identity = ?').run(s.baseUrl);
    db.close();
    const before = hashes(p);
    expect([...before.keys()]).toEqual([
      'r1.json',
      'r1.mp4',
      'r1.take1.json',
      'r1.take1.mp4',
      'r2.json',
      'r2.mp4',
    ]);

    // plan reads the ledger without migrating it, and already sees the files where they are.
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir, env: cliEnv(s) });
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout).stray_files).toEqual([]);
    const run = await runAgainst(s, p, ['--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).totals).toMatchObject({ items: 2, done: 2, expired: 0 });
    expect(requestsTo(s, 'POST', '/v1/videos')).toEqual([]);
    expect(requestsTo(s, 'GET', '/v1/files/')).toEqual([]);
    expect(jobFetches(s)).toEqual([]);
    expect(hashes(p)).toEqual(before);

    const status = await statusJson(p);
    expect(status.items.map((item) => [item.id, item.state, item.files])).toEqual([
      ['r1', 'done', [join('out', 'r', 'r1.mp4')]],
      ['r2', 'done', [join('out', 'r', 'r2.mp4')]],
    ]);
    const takes = (status.items[0] as { takes?: Array<{ files: string[] }> }).takes;
    expect(takes?.map((take) => take.files)).toEqual([
      [join('out', 'r', 'r1.mp4')],
      [join('out', 'r', 'r1.take1.mp4')],
    ]);
    const stored = ledgerRows<{ path: string }>(p, 'SELECT path FROM files ORDER BY attempt_id');
    expect(stored.map((row) => row.path)).toEqual(
      ['r1.take1.mp4', 'r2.mp4', 'r1.mp4'].map((name) => join('out', 'r', name)),
    );
  });
});
