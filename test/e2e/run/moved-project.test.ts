import { cpSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OWNER_MARKER } from '../../../src/downloads/output-owner.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  cliEnv,
  type E2eProject,
  filesBelow,
  jobFetches,
  ledgerRows,
  manifestYaml,
  project,
  requestsTo,
  runAgainst,
  sha256File,
  startTestSandbox,
  statusJson,
  waitUntil,
} from '../../support/e2e.js';
import { tempDir } from '../../support/temp.js';

/*
 * "A batch is where its files are" (docs/manifest.md, "Files and paths"): a project moved or
 * copied as a whole finds its saved outputs, earlier takes and sidecars in the new place, and
 * sends, downloads and pays for nothing again, within the service's retention and after it.
 */

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const NAME = 'trip';
const YAML = `${manifestYaml(NAME)}items:\n  - {id: a, prompt: first}\n  - {id: b, prompt: second}\n`;
const ALL_FILES = ['a.json', 'a.mp4', 'a.take1.json', 'a.take1.mp4', 'b.json', 'b.mp4'];

/** Runs each argument list in turn, every run exiting 0. */
async function runs(s: SandboxHandle, p: E2eProject, ...argLists: string[][]): Promise<void> {
  for (const args of argLists) {
    const result = await runAgainst(s, p, args);
    expect(result.code, result.stderr).toBe(0);
  }
}

/** Both items done, `a` redone: take 1 kept as a.take1.mp4 beside a.mp4, each with its sidecar. */
async function doneWithTakes(s: SandboxHandle, extra: string[] = []): Promise<E2eProject> {
  const p = project(NAME, YAML);
  await runs(s, p, extra, ['--redo', 'a', ...extra]);
  expect(filesBelow(p.outDir)).toEqual(ALL_FILES);
  return p;
}

/** The same project in a new folder, moved (renamed) or copied there whole. */
function relocated(p: E2eProject, how: 'move' | 'copy', keep: string[] = []): E2eProject {
  const dir = join(tempDir('mediabatch-moved-'), 'project');
  if (how === 'move') renameSync(p.dir, dir);
  else cpSync(p.dir, dir, { recursive: true });
  const at = (path: string) => (keep.includes(path) ? path : join(dir, relative(p.dir, path)));
  return { dir, manifest: at(p.manifest), ledger: at(p.ledger), outDir: at(p.outDir) };
}

const hashes = (p: E2eProject) =>
  new Map(filesBelow(p.outDir).map((name) => [name, sha256File(join(p.outDir, name))]));

/** What the sandbox has been asked for that would cost or fetch something. */
const served = (s: SandboxHandle) => ({
  posts: requestsTo(s, 'POST', '/v1/videos').length,
  downloads: requestsTo(s, 'GET', '/v1/files/').length,
  jobFetches: jobFetches(s).length,
});

/**
 * plan, run and status of `p` in its new place: no stray file, every item done, nothing posted,
 * downloaded or fetched, every file byte for byte as `before`, status and the ledger naming it
 * where it is (the ledger's rows relative to the manifest's folder).
 */
async function expectSameBatch(
  s: SandboxHandle,
  p: E2eProject,
  before: Map<string, string>,
  ledgerArgs: string[] = [],
) {
  const seen = served(s);
  const plan = await runCli(['plan', p.manifest, '--json', ...ledgerArgs], { cwd: p.dir, env: cliEnv(s) });
  expect(plan.code, plan.stderr).toBe(0);
  expect(JSON.parse(plan.stdout).stray_files).toEqual([]);
  const run = await runAgainst(s, p, ['--json', ...ledgerArgs]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).not.toContain('fetching it again');
  expect(JSON.parse(run.stdout).totals).toMatchObject({ items: 2, done: 2, expired: 0 });
  expect(served(s)).toEqual(seen);
  expect(hashes(p)).toEqual(before);
  const out = relative(p.dir, p.outDir);
  const status = await statusJson(p);
  expect(status.items.map((item) => [item.id, item.state, item.files])).toEqual([
    ['a', 'done', [join(out, 'a.mp4')]],
    ['b', 'done', [join(out, 'b.mp4')]],
  ]);
  const takes = (status.items[0] as { takes?: Array<{ files: string[] }> }).takes;
  expect(takes?.map((take) => take.files)).toEqual([[join(out, 'a.mp4')], [join(out, 'a.take1.mp4')]]);
  const stored = ledgerRows<{ path: string }>(p, 'SELECT path FROM files ORDER BY path').map(
    (row) => row.path,
  );
  expect(stored).toEqual(['a.mp4', 'a.take1.mp4', 'b.mp4'].map((name) => join(out, name)));
}

describe('a project moved or copied as a whole is the same batch', () => {
  it('moved within retention: takes and sidecars found, nothing sent or downloaded again', async () => {
    sandbox = await startTestSandbox();
    const p = await doneWithTakes(sandbox);
    const before = hashes(p);
    expect(before.size).toBe(ALL_FILES.length);
    await expectSameBatch(sandbox, relocated(p, 'move'), before);
  });

  it('copied after retention: the copy and the original each keep their own files', async () => {
    sandbox = await startTestSandbox({ retention_seconds: 3 });
    const s = sandbox;
    const p = await doneWithTakes(s);
    const before = hashes(p);
    // The service has deleted every output: a file not found where the ledger says is lost for good.
    await waitUntil(
      () => s.records().jobs.every((job) => job.expiresAt !== null && Date.parse(job.expiresAt) < Date.now()),
      5000,
      'the outputs to pass their retention',
    );
    const copy = relocated(p, 'copy');
    await expectSameBatch(s, copy, before);
    await expectSameBatch(s, p, before);
  });

  it('a ledger kept elsewhere with --ledger finds the outputs beside the moved manifest', async () => {
    sandbox = await startTestSandbox();
    const ledger = join(tempDir('mediabatch-ledger-'), 'kept.sqlite');
    const p = { ...(await doneWithTakes(sandbox, ['--ledger', ledger])), ledger };
    const before = hashes(p);
    const moved = relocated(p, 'move', [ledger]);
    // The output folder's marker still names the ledger, which stayed where it was.
    await expectSameBatch(sandbox, moved, before, ['--ledger', ledger]);
  });
});

describe('an owner marker from an older mediabatch (the ledger by its absolute path)', () => {
  const oldMarker = (p: E2eProject) =>
    writeFileSync(
      join(p.outDir, OWNER_MARKER),
      JSON.stringify({ mediabatch_output_folder: 1, manifest: NAME, ledger: p.ledger, service: 'old' }),
    );
  const markerOf = (p: E2eProject) => JSON.parse(readFileSync(join(p.outDir, OWNER_MARKER), 'utf8'));

  it('is taken for the moved project when nothing is left at its path, and rewritten relative', async () => {
    sandbox = await startTestSandbox();
    const p = await doneWithTakes(sandbox);
    oldMarker(p);
    const moved = relocated(p, 'move');
    await expectSameBatch(sandbox, moved, hashes(moved));
    expect(markerOf(moved)).toMatchObject({
      manifest: NAME,
      ledger: relative(moved.outDir, moved.ledger),
      ledger_at: moved.ledger,
    });
  });

  it('refuses a copy while the ledger it names is alive, sending nothing', async () => {
    sandbox = await startTestSandbox();
    const p = await doneWithTakes(sandbox);
    oldMarker(p);
    const copy = relocated(p, 'copy');
    const seen = served(sandbox);
    const run = await runAgainst(sandbox, copy);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('belongs to another batch');
    expect(served(sandbox)).toEqual(seen);
    expect(markerOf(copy)).toMatchObject({ ledger: p.ledger });
  });
});
