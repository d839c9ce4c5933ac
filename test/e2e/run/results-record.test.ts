import { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  type E2eProject,
  expectRerunSendsNothing,
  ledgerRows,
  manifestYaml,
  project,
  requestsTo,
  runAgainst,
  sha256File,
  spawnRun,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

/**
 * A paid result is one record that every copy points at (docs/results.md, "The record of a
 * result"): the paths a person takes between runs, each as it was found to lose money or words.
 */

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

function newProject(text: string): E2eProject {
  const p = project('rec', text);
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  return p;
}

const items = (entries: Array<[string, string]>) =>
  `${manifestYaml('rec')}items:\n${entries.map(([id, prompt]) => `  - {id: ${id}, prompt: "${prompt}"}\n`).join('')}`;

/** Items a and b with these prompts. */
const ab = (a: string, b: string) =>
  items([
    ['a', a],
    ['b', b],
  ]);

/** One byte changed, the size and the modification time kept: only a SHA-256 sees it. */
function alter(path: string): void {
  const { atime, mtime } = statSync(path);
  const bytes = readFileSync(path);
  bytes[bytes.length - 1] = (bytes[bytes.length - 1]! + 1) % 256;
  writeFileSync(path, bytes);
  utimesSync(path, atime, mtime);
}

/** The sandbox's job whose output holds exactly these bytes. */
function jobOfBytes(sha256: string): string | undefined {
  return sandbox.records().jobs.find((job) => job.files[0]?.sha256 === sha256)?.id;
}

interface Sidecar {
  item: string;
  take: number;
  job_id: string | null;
  request: { input: { prompt: string } };
  created_at: string;
  completed_at: string | null;
  copied_from?: { item: string; take: number };
  copied_at?: string;
}

const sidecarOf = (p: E2eProject, id: string) =>
  JSON.parse(readFileSync(join(p.outDir, `${id}.json`), 'utf8')) as Sidecar;

async function exportById(p: E2eProject): Promise<Map<string, { job_id: string | null }>> {
  const result = await runCli(['export', p.manifest], { cwd: p.dir });
  expect(result.code, result.stderr).toBe(0);
  const records = result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { id: string; job_id: string | null });
  return new Map(records.map((record) => [record.id, record]));
}

async function runOk(p: E2eProject): Promise<string> {
  const result = await runAgainst(sandbox, p);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout + result.stderr;
}

/** Every item's status, export record and sidecar name the job whose bytes its file holds. */
async function expectEveryPlaceNamesTheJob(p: E2eProject, ids: readonly string[]): Promise<void> {
  const status = new Map((await statusJson(p)).items.map((item) => [item.id, item]));
  const exported = await exportById(p);
  for (const id of ids) {
    const job = jobOfBytes(sha256File(join(p.outDir, `${id}.mp4`)));
    expect(job, `${id}: its file holds no job's bytes`).toBeDefined();
    expect(status.get(id)?.job_id, `${id}: status`).toBe(job);
    expect(exported.get(id)?.job_id, `${id}: export`).toBe(job);
    const sidecar = sidecarOf(p, id);
    expect(sidecar.job_id, `${id}: sidecar`).toBe(job);
    // The request the sidecar keeps is the one that job was sent.
    const sent = sandbox.records().jobs.find((each) => each.id === job);
    expect(sidecar.request.input.prompt, `${id}: sidecar request`).toBe(sent?.input.prompt);
    expect(Date.parse(sidecar.created_at) <= Date.parse(sidecar.completed_at ?? ''), `${id}: times`).toBe(
      true,
    );
    if (sidecar.copied_at !== undefined)
      expect(Date.parse(sidecar.completed_at ?? '') <= Date.parse(sidecar.copied_at)).toBe(true);
  }
}

describe('a paid result is one record', () => {
  it('four altered twins and a fifth: one free fetch of the job, four copies, nothing paid', async () => {
    sandbox = await startTestSandbox();
    const twins = (n: number) => items(Array.from({ length: n }, (_, i) => [`t${i + 1}`, 'a red boat']));
    const p = newProject(twins(4));
    await runOk(p);
    expect(allPosts(sandbox)).toHaveLength(1);
    const [job] = sandbox.records().jobs;
    for (const id of ['t1', 't2', 't3', 't4']) alter(join(p.outDir, `${id}.mp4`));
    writeFileSync(p.manifest, twins(5));

    const plan = await runCli(['plan', p.manifest, '--json', '--verify'], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout).totals).toMatchObject({ to_submit: 0 });
    const said = await runOk(p);
    expect(allPosts(sandbox)).toHaveLength(1);
    expect(said).not.toMatch(/regenerate/i);
    for (const id of ['t1', 't2', 't3', 't4', 't5'])
      expect(sha256File(join(p.outDir, `${id}.mp4`)), id).toBe(job!.files[0]!.sha256);
    expect((await statusJson(p)).items.every((item) => item.state === 'done')).toBe(true);
    await expectEveryPlaceNamesTheJob(p, ['t1', 't2', 't3', 't4', 't5']);
    await expectRerunSendsNothing(sandbox, p, 0);
  }, 90_000);

  it('an undone edit and a swap: status, export and every sidecar name the job that made the bytes', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(ab('a red boat', 'a blue car'));
    await runOk(p);
    writeFileSync(p.manifest, ab('a green boat', 'a blue car'));
    await runOk(p);
    writeFileSync(p.manifest, ab('a red boat', 'a blue car'));
    await runOk(p);
    writeFileSync(p.manifest, ab('a blue car', 'a red boat'));
    await runOk(p);
    expect(allPosts(sandbox)).toHaveLength(3);
    await expectEveryPlaceNamesTheJob(p, ['a', 'b']);
    // Each copy says which take it was copied from.
    expect(sidecarOf(p, 'a').copied_from).toEqual({ item: 'b', take: 1 });
    expect(sidecarOf(p, 'b').copied_from?.item).toBe('a');
  }, 90_000);

  it('altered copies are repaired by one plain run for free, and nothing advises a paid option', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(ab('a red boat', 'a blue car'));
    await runOk(p);
    // Swapped: both files are copies now.
    writeFileSync(p.manifest, ab('a blue car', 'a red boat'));
    await runOk(p);
    alter(join(p.outDir, 'a.mp4'));
    rmSync(join(p.outDir, 'b.mp4'));

    const status = await runCli(['status', p.manifest, '--verify'], { cwd: p.dir });
    expect(status.stdout + status.stderr).not.toMatch(/regenerate/i);
    expect(status.stdout).toMatch(/run fetches it again from job job_\w+ for free/);
    const said = await runOk(p);
    expect(said).not.toMatch(/regenerate|job null/i);
    expect(allPosts(sandbox)).toHaveLength(2);
    await expectEveryPlaceNamesTheJob(p, ['a', 'b']);
    expect((await statusJson(p)).items.map((item) => item.state)).toEqual(['done', 'done']);
    await expectRerunSendsNothing(sandbox, p, 0);
  }, 90_000);

  it('import after a lost ledger adopts the copies mediabatch wrote: no stranger, their job named, nothing sent', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(ab('a red boat', 'a blue car'));
    await runOk(p);
    // Swapped: a.mp4 and b.mp4 are copies of each other's first take.
    writeFileSync(p.manifest, ab('a blue car', 'a red boat'));
    await runOk(p);
    const before = { a: sha256File(join(p.outDir, 'a.mp4')), b: sha256File(join(p.outDir, 'b.mp4')) };
    rmSync(join(p.dir, '.mediabatch'), { recursive: true, force: true });

    const imported = await runCli(['import', p.manifest], { cwd: p.dir, env: cliEnv(sandbox) });
    expect(imported.code, imported.stderr).toBe(0);
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout) as {
      stray_files: string[] | null;
      totals: { to_submit: number };
    };
    expect(planned.stray_files ?? []).toEqual([]);
    expect(planned.totals.to_submit).toBe(0);
    await expectEveryPlaceNamesTheJob(p, ['a', 'b']);
    await expectRerunSendsNothing(sandbox, p, 0);
    expect({ a: sha256File(join(p.outDir, 'a.mp4')), b: sha256File(join(p.outDir, 'b.mp4')) }).toEqual(
      before,
    );
    expect(allPosts(sandbox)).toHaveLength(2);
  }, 90_000);

  it("a file saved and then killed before its commit is the job's output: recorded, not fetched, not a stranger", async () => {
    sandbox = await startTestSandbox();
    const p = newProject(ab('a red boat', 'a blue car'));
    await runOk(p);
    // The ledger as a run killed between saving b's file (and its sidecar) and committing it leaves it.
    const db = new Database(p.ledger);
    db.exec(`UPDATE attempts SET files_saved = 0 WHERE item_id = 'b';
      DELETE FROM files WHERE attempt_id IN (SELECT id FROM attempts WHERE item_id = 'b');
      UPDATE items SET state = 'in_flight' WHERE item_id = 'b';`);
    db.close();
    const saved = statSync(join(p.outDir, 'b.mp4'));
    const bytes = sha256File(join(p.outDir, 'b.mp4'));
    const downloads = requestsTo(sandbox, 'GET', '/v1/files/').length;
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout) as {
      stray_files: string[] | null;
      items: Array<{ id: string; reason?: string }>;
    };
    expect(planned.stray_files ?? []).toEqual([]);
    expect(planned.items[1]!.reason).toMatch(/saved before/);

    const said = await runOk(p);
    expect(said).not.toMatch(/refusing|did not write/);
    expect(requestsTo(sandbox, 'GET', '/v1/files/')).toHaveLength(downloads);
    expect(allPosts(sandbox)).toHaveLength(2);
    expect(statSync(join(p.outDir, 'b.mp4')).ino).toBe(saved.ino);
    expect(sha256File(join(p.outDir, 'b.mp4'))).toBe(bytes);
    expect((await statusJson(p)).items.map((item) => item.state)).toEqual(['done', 'done']);
    await expectEveryPlaceNamesTheJob(p, ['a', 'b']);
  }, 90_000);

  it('says an item is done only once the ledger holds it done', async () => {
    sandbox = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 8 }],
    });
    const p = newProject(items(Array.from({ length: 24 }, (_, i) => [`i${i}`, `prompt ${i}`])));
    const { child, done } = spawnRun(sandbox, p, ['--progress', 'ndjson']);
    const told: string[] = [];
    const notHeld: string[] = [];
    let partial = '';
    // Read the ledger the moment each `done` is told: a ledger that holds it already says so.
    child.stderr!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const event = JSON.parse(line) as { event: string; item?: string; state?: string };
        if (event.event !== 'item' || event.state !== 'done') continue;
        told.push(event.item!);
        const [row] = ledgerRows<{ state: string }>(
          p,
          'SELECT state FROM items WHERE item_id = ?',
          event.item,
        );
        if (row?.state !== 'done') notHeld.push(`${event.item}: ${row?.state ?? 'no row'}`);
      }
    });
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(told).toHaveLength(24);
    expect(notHeld).toEqual([]);
  }, 90_000);
});
