import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
  sha256File,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

/**
 * `import` adopts the outputs a lost ledger saved (docs/import.md, "Outputs found on disk"): a
 * succeeded job whose outputs the service deleted is matched to the file whose sidecar names it
 * and whose bytes match that sidecar's SHA-256, and is recorded as saved, not expired.
 */

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Outputs live this long at the service: the test waits it out once, after the runs. */
const RETENTION_SECONDS = 3;

async function newSandbox(): Promise<SandboxHandle> {
  const sandbox = await startTestSandbox({ retention_seconds: RETENTION_SECONDS });
  cleanup.push(() => sandbox.close());
  return sandbox;
}

function newProject(name: string, ids: string[]): E2eProject {
  const items = ids.map((id) => `  - {id: ${id}, prompt: "shot ${id}"}\n`).join('');
  const p = project(name, `${manifestYaml(name, 'concurrency: 3\n')}items:\n${items}`);
  cleanup.push(() => rmSync(p.dir, { recursive: true, force: true }));
  return p;
}

/** Waits until every job the ledger saw has had its outputs deleted by the service. */
async function outputsExpired(p: E2eProject): Promise<void> {
  const [row] = ledgerRows<{ last: string }>(p, 'SELECT MAX(expires_at) AS last FROM attempts');
  const wait = Date.parse(row!.last) - Date.now() + 300;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

const cli = (sandbox: SandboxHandle, p: E2eProject, args: string[]) =>
  runCli([args[0]!, p.manifest, ...args.slice(1)], { cwd: p.dir, env: cliEnv(sandbox) });

async function json<T = Record<string, unknown>>(sandbox: SandboxHandle, p: E2eProject, args: string[]) {
  const result = await cli(sandbox, p, [...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/** Every file below the output folder with its SHA-256. */
function hashes(p: E2eProject): Record<string, string> {
  return Object.fromEntries(filesBelow(p.outDir).map((path) => [path, sha256File(join(p.outDir, path))]));
}

interface ImportJson {
  found_on_disk: number;
  copied: number;
  items: Array<{ id: string; state: string; files: string[]; on_disk: boolean }>;
}

interface PlanJson {
  items: Array<{ id: string; plan: string; reason?: string }>;
  stray_files: string[];
  stray_reasons?: Record<string, string>;
  totals: { to_submit: number };
}

/** A run of `ids`, `a` redone once (a.take1.mp4 kept beside a.mp4), then the outputs' retention waited out. */
async function ranAndExpired(sandbox: SandboxHandle, p: E2eProject): Promise<void> {
  expect((await runAgainst(sandbox, p)).code).toBe(0);
  expect((await runAgainst(sandbox, p, ['--redo', 'a'])).code).toBe(0);
  await outputsExpired(p);
}

describe('mediabatch import: outputs found on disk', () => {
  it('after the retention, a lost ledger is rebuilt with every file adopted; nothing is paid again', async () => {
    const sandbox = await newSandbox();
    const p = newProject('kept', ['a', 'b']);
    await ranAndExpired(sandbox, p);
    const before = hashes(p);
    expect(Object.keys(before)).toContain('a.take1.mp4');
    rmSync(dirname(p.ledger), { recursive: true, force: true });
    const posts = allPosts(sandbox).length;

    const text = await cli(sandbox, p, ['import']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('3 outputs found on disk');
    rmSync(dirname(p.ledger), { recursive: true, force: true });
    const imported = await json<ImportJson>(sandbox, p, ['import']);
    expect(imported.found_on_disk).toBe(3);
    expect(imported.items.map((item) => [item.id, item.state, item.on_disk])).toEqual([
      ['a', 'done', true],
      ['b', 'done', true],
    ]);

    const plan = await json<PlanJson>(sandbox, p, ['plan']);
    expect(plan.items.map((item) => item.plan)).toEqual(['done', 'done']);
    expect(plan.stray_files).toEqual([]);
    expect(plan.totals.to_submit).toBe(0);
    const status = await statusJson(p);
    expect(status.items.map((item) => item.state)).toEqual(['done', 'done']);
    const a = status.items[0] as { takes?: Array<{ take: number; files: string[] }> };
    expect(a.takes?.map((take) => [take.take, take.files])).toEqual([
      [2, ['out/kept/a.mp4']],
      [1, ['out/kept/a.take1.mp4']],
    ]);

    for (const extra of [[], ['--regenerate-expired']]) {
      const run = await runAgainst(sandbox, p, extra);
      expect(run.code, run.stderr).toBe(0);
    }
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect((await statusJson(p)).items.map((item) => item.state)).toEqual(['done', 'done']);
    expect(hashes(p)).toEqual(before);
  }, 60_000);

  it('copies files moved aside back into place with --files-from; nothing is paid again', async () => {
    const sandbox = await newSandbox();
    const p = newProject('moved', ['a', 'b']);
    await ranAndExpired(sandbox, p);
    const before = hashes(p);
    const aside = join(p.dir, 'aside');
    renameSync(p.outDir, aside);
    rmSync(dirname(p.ledger), { recursive: true, force: true });
    const posts = allPosts(sandbox).length;

    const imported = await json<ImportJson>(sandbox, p, ['import', '--files-from', aside]);
    expect(imported.found_on_disk).toBe(3);
    expect(imported.copied).toBe(3);
    expect(imported.items.map((item) => item.state)).toEqual(['done', 'done']);
    // Each video and its sidecar back under the manifest's names, the take under its take name.
    expect(hashes(p)).toEqual(before);
    expect(filesBelow(aside)).toEqual(Object.keys(before).sort());

    const plan = await json<PlanJson>(sandbox, p, ['plan']);
    expect(plan.items.map((item) => item.plan)).toEqual(['done', 'done']);
    expect(plan.stray_files).toEqual([]);
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect((await statusJson(p)).items.map((item) => item.state)).toEqual(['done', 'done']);
    expect(hashes(p)).toEqual(before);
  }, 60_000);

  it('a file whose sidecar is missing or does not match stays a stranger, and plan says why', async () => {
    const sandbox = await newSandbox();
    const p = newProject('odd', ['a', 'b', 'c']);
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    await outputsExpired(p);
    rmSync(dirname(p.ledger), { recursive: true, force: true });
    const altered = readFileSync(join(p.outDir, 'a.mp4'));
    altered.writeUInt8(altered.readUInt8(altered.length - 3) ^ 0xff, altered.length - 3);
    writeFileSync(join(p.outDir, 'a.mp4'), altered);
    rmSync(join(p.outDir, 'b.json'));
    // A copy elsewhere of c with its sidecar must not be copied over the intact c.
    mkdirSync(join(p.dir, 'aside'));
    cpSync(join(p.outDir, 'c.mp4'), join(p.dir, 'aside', 'c.mp4'));
    cpSync(join(p.outDir, 'c.json'), join(p.dir, 'aside', 'c.json'));

    const imported = await json<ImportJson>(sandbox, p, ['import', '--files-from', join(p.dir, 'aside')]);
    expect(imported.found_on_disk).toBe(1);
    expect(imported.copied).toBe(0);
    expect(imported.items.map((item) => [item.id, item.state])).toEqual([
      ['a', 'expired'],
      ['b', 'expired'],
      ['c', 'done'],
    ]);

    const plan = await json<PlanJson>(sandbox, p, ['plan']);
    expect(plan.items.map((item) => item.plan)).toEqual(['expired', 'expired', 'done']);
    expect(plan.stray_files).toEqual(['out/odd/a.json', 'out/odd/a.mp4', 'out/odd/b.mp4']);
    expect(plan.stray_reasons?.['out/odd/a.mp4']).toMatch(/do not match the SHA-256 its sidecar records/);
    expect(plan.stray_reasons?.['out/odd/b.mp4']).toMatch(/no sidecar/);
    const text = await cli(sandbox, p, ['plan']);
    expect(text.stdout).toMatch(/\? out\/odd\/a\.mp4 \(.*do not match the SHA-256 its sidecar records/);
    expect(text.stdout).toMatch(/\? out\/odd\/b\.mp4 \(.*no sidecar/);
  }, 60_000);
});
