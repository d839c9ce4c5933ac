import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  type E2eProject,
  expectRerunSendsNothing,
  filesBelow,
  jobsOfItem,
  manifestYaml,
  project,
  runAgainst,
  sandboxNetByItem,
  sha256File,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';
import { galleryData } from '../../support/gallery-data.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const YAML = `${manifestYaml('redo', 'budget_usd: "20.00"\n')}items:\n  - {id: a, prompt: first}\n  - {id: b, prompt: second}\n  - {id: c, prompt: third}\n`;

async function doneProject(): Promise<E2eProject> {
  const p = project('redo', YAML);
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  const first = await runAgainst(sandbox, p);
  expect(first.code, first.stderr).toBe(0);
  return p;
}

const sidecar = (p: E2eProject, name: string) =>
  JSON.parse(readFileSync(join(p.outDir, name), 'utf8')) as {
    take: number;
    job_id: string;
    file: { sha256: string };
  };

describe('run --redo', () => {
  it('makes a new paid take of two items, preserving the earlier ones as .take1 with their sidecars', async () => {
    sandbox = await startTestSandbox();
    const p = await doneProject();
    const netBefore = sandboxNetByItem(sandbox, 'redo');
    const keysBefore = new Set(allPosts(sandbox).map((post) => post.idempotencyKey));
    const old = { a: sha256File(join(p.outDir, 'a.mp4')), b: sha256File(join(p.outDir, 'b.mp4')) };

    const result = await runAgainst(sandbox, p, ['--redo', 'a', 'b']);
    expect(result.code, result.stderr).toBe(0);

    // Two new charges, from the sandbox's own records, each under a fresh key; c untouched.
    for (const id of ['a', 'b'] as const) {
      const jobs = jobsOfItem(sandbox, 'redo', id);
      expect(jobs.map((job) => job.status)).toEqual(['succeeded', 'succeeded']);
      expect(keysBefore.has(jobs[1]!.idempotencyKey)).toBe(false);
      expect(sandboxNetByItem(sandbox, 'redo').get(id)).toBe(netBefore.get(id)! + jobs[1]!.amountMicros);
      // The new take under the item's name, the earlier one kept beside it, each with its sidecar.
      expect(jobs[1]!.files[0]!.sha256).not.toBe(old[id]);
      expect(sha256File(join(p.outDir, `${id}.mp4`))).toBe(jobs[1]!.files[0]!.sha256);
      expect(sha256File(join(p.outDir, `${id}.take1.mp4`))).toBe(old[id]);
      expect(sidecar(p, `${id}.json`)).toMatchObject({ take: 2, job_id: jobs[1]!.id });
      expect(sidecar(p, `${id}.take1.json`)).toMatchObject({
        take: 1,
        job_id: jobs[0]!.id,
        file: { sha256: old[id] },
      });
    }
    expect(jobsOfItem(sandbox, 'redo', 'c')).toHaveLength(1);
    expect(filesBelow(p.outDir)).toEqual([
      'a.json',
      'a.mp4',
      'a.take1.json',
      'a.take1.mp4',
      'b.json',
      'b.mp4',
      'b.take1.json',
      'b.take1.mp4',
      'c.json',
      'c.mp4',
    ]);

    // status lists the takes newest first; a plain re-run pays nothing more.
    const status = await statusJson(p);
    const a = status.items.find((item) => item.id === 'a') as unknown as {
      takes: Array<{ take: number; files: string[] }>;
    };
    expect(a.takes.map((take) => [take.take, take.files])).toEqual([
      [2, [join('out', 'redo', 'a.mp4')]],
      [1, [join('out', 'redo', 'a.take1.mp4')]],
    ]);
    await expectRerunSendsNothing(sandbox, p, 0);

    // The gallery shows both takes of a, newest first, each playable from the page's folder.
    expect((await runCli(['report', p.manifest, '--html'], { cwd: p.dir })).code).toBe(0);
    const html = readFileSync(join(p.outDir, 'index.html'), 'utf8');
    const tile = galleryData(html).tiles.find((entry) => entry.id === 'a')!;
    expect(tile.takes.map((take) => [take.take, take.files.map((file) => file.href)])).toEqual([
      [2, ['a.mp4']],
      [1, ['a.take1.mp4']],
    ]);
  });

  it('reads ids from @redo.txt and keeps take 2 as .take2 on a second redo', async () => {
    sandbox = await startTestSandbox();
    const p = await doneProject();
    writeFileSync(join(p.dir, 'redo.txt'), 'c\n');
    expect((await runAgainst(sandbox, p, ['--redo', '@redo.txt'])).code).toBe(0);
    expect((await runAgainst(sandbox, p, ['--redo', '@redo.txt'])).code).toBe(0);
    const jobs = jobsOfItem(sandbox, 'redo', 'c');
    expect(jobs).toHaveLength(3);
    expect(filesBelow(p.outDir).filter((name) => name.startsWith('c.'))).toEqual([
      'c.json',
      'c.mp4',
      'c.take1.json',
      'c.take1.mp4',
      'c.take2.json',
      'c.take2.mp4',
    ]);
    expect([1, 2, 3].map((take) => sidecar(p, take === 3 ? 'c.json' : `c.take${take}.json`).job_id)).toEqual(
      jobs.map((job) => job.id),
    );
    const report = await runCli(['report', p.manifest], { cwd: p.dir });
    expect(report.stdout).toMatch(/^c\s+3\s+mb_/m);
  });

  it('refuses an unknown or unfinished item before sending anything', async () => {
    sandbox = await startTestSandbox();
    const p = await doneProject();
    const posts = allPosts(sandbox).length;
    const unknown = await runAgainst(sandbox, p, ['--redo', 'bb']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      "--redo bb: no item 'bb' in redo, did you mean 'b'?; nothing was submitted",
    );
    const fresh = project('redo', YAML);
    onTestFinished(() => rmSync(fresh.dir, { recursive: true, force: true }));
    const pending = await runAgainst(sandbox, fresh, ['--redo', 'a']);
    expect(pending.code).toBe(2);
    expect(pending.stderr).toContain('--redo a: the item is pending, not done');
    expect(allPosts(sandbox)).toHaveLength(posts);
  });

  it('a redo that does not fit the budget sends nothing and keeps the item done', async () => {
    sandbox = await startTestSandbox();
    const p = await doneProject();
    const spent = [...sandboxNetByItem(sandbox, 'redo').values()].reduce((sum, micros) => sum + micros, 0);
    writeFileSync(
      p.manifest,
      YAML.replace('budget_usd: "20.00"', `budget_usd: "${(spent / 1e6).toFixed(6)}"`),
    );
    const before = sha256File(join(p.outDir, 'a.mp4'));
    const posts = allPosts(sandbox).length;
    const result = await runAgainst(sandbox, p, ['--redo', 'a']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'a: the redo has nothing left of budget_usd to reserve (prices seen $0.04): raise budget_usd; its take stays',
    );
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(before);
    expect((await statusJson(p)).items.map((item) => item.state)).toEqual(['done', 'done', 'done']);
  });
});
