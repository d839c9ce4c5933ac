import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  type E2eProject,
  expectMoneyAgrees,
  expectRerunSendsNothing,
  jobFetches,
  manifestYaml,
  project,
  runAgainst,
  sha256File,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

/** A paid result is found by its request (docs/results.md): no path buys it twice. */

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const yaml = (a: string, b: string, extra = '') =>
  `${manifestYaml('reuse', extra)}items:\n  - {id: a, prompt: "${a}"}\n  - {id: b, prompt: "${b}"}\n`;

async function planJson(p: E2eProject, args: string[] = []) {
  const result = await runCli(['plan', p.manifest, '--json', ...args], { cwd: p.dir });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as {
    items: Array<{ id: string; plan: string; reason?: string; reused_from?: { item: string; take: number } }>;
    totals: { to_submit: number; reused: number };
  };
}

async function runOk(p: E2eProject): Promise<void> {
  const result = await runAgainst(sandbox, p);
  expect(result.code, result.stderr).toBe(0);
}

function newProject(text: string): E2eProject {
  const p = project('reuse', text);
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  return p;
}

const sidecarOf = (p: E2eProject, name: string) =>
  JSON.parse(readFileSync(join(p.outDir, name), 'utf8')) as {
    item: string;
    take: number;
    job_id: string;
    copied_from?: { item: string; take: number };
  };

describe('a saved take is found by its request', () => {
  it('undoing an edit sends nothing: <id>.mp4 holds the first take again, the edited take stays on disk', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(yaml('a red boat', 'a blue car'));
    await runOk(p);
    const first = sha256File(join(p.outDir, 'a.mp4'));
    const firstJob = sidecarOf(p, 'a.json').job_id;

    writeFileSync(p.manifest, yaml('a green boat', 'a blue car'));
    const editPosts = allPosts(sandbox).length;
    await runOk(p);
    expect(allPosts(sandbox)).toHaveLength(editPosts + 1);
    const edited = sha256File(join(p.outDir, 'a.mp4'));
    expect(edited).not.toBe(first);

    writeFileSync(p.manifest, yaml('a red boat', 'a blue car'));
    const plan = await planJson(p);
    expect(plan.items[0]).toMatchObject({ id: 'a', plan: 'reused', reused_from: { item: 'a', take: 1 } });
    expect(plan.items[0]!.reason).toContain(firstJob);
    expect(plan.totals).toMatchObject({ to_submit: 0, reused: 1 });
    const text = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(text.stdout).toMatch(/= a +reused \(free\) +the same request as take 1 of a/);
    expect(text.stdout).toContain(
      'Plan: nothing to submit, 1 found already paid for (nothing to pay), 1 unchanged.',
    );

    await expectRerunSendsNothing(sandbox, p, 0);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(first);
    expect(sha256File(join(p.outDir, 'a.take2.mp4'))).toBe(edited);
    expect(sha256File(join(p.outDir, 'a.take1.mp4'))).toBe(first);
    // The copy's sidecar names its own take, the job that made its bytes and the take it copies.
    expect(sidecarOf(p, 'a.json')).toMatchObject({
      item: 'a',
      take: 3,
      job_id: firstJob,
      copied_from: { item: 'a', take: 1 },
    });
    expect(sidecarOf(p, 'a.take1.json')).toMatchObject({ item: 'a', take: 1, job_id: firstJob });
    const status = await statusJson(p);
    expect(status.items.map((item) => item.state)).toEqual(['done', 'done']);
    await expectMoneyAgrees(sandbox, p, 'reuse');
    // And nothing more on the next run either.
    await expectRerunSendsNothing(sandbox, p, 0);
  }, 60_000);

  it('two swapped ids send nothing: each file holds the request its id now asks for', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(yaml('a red boat', 'a blue car'));
    await runOk(p);
    const boat = sha256File(join(p.outDir, 'a.mp4'));
    const car = sha256File(join(p.outDir, 'b.mp4'));

    writeFileSync(p.manifest, yaml('a blue car', 'a red boat'));
    const plan = await planJson(p);
    expect(plan.items.map((item) => [item.id, item.plan, item.reused_from])).toEqual([
      ['a', 'reused', { item: 'b', take: 1 }],
      ['b', 'reused', { item: 'a', take: 1 }],
    ]);
    await expectRerunSendsNothing(sandbox, p, 0);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(car);
    expect(sha256File(join(p.outDir, 'b.mp4'))).toBe(boat);
    // Each earlier file is kept as its item's take, nothing overwritten.
    expect(sha256File(join(p.outDir, 'a.take1.mp4'))).toBe(boat);
    expect(sha256File(join(p.outDir, 'b.take1.mp4'))).toBe(car);
    await expectMoneyAgrees(sandbox, p, 'reuse');
  }, 60_000);

  it("a take whose file was altered is not copied: its job's output, still held, is fetched again as a new take for free, as plan said", async () => {
    sandbox = await startTestSandbox();
    const p = newProject(yaml('a red boat', 'a blue car'));
    await runOk(p);
    const first = sha256File(join(p.outDir, 'a.mp4'));
    const firstJob = sidecarOf(p, 'a.json').job_id;
    writeFileSync(p.manifest, yaml('a green boat', 'a blue car'));
    await runOk(p);
    const edited = sha256File(join(p.outDir, 'a.mp4'));
    // The first take's file loses its bytes: there is nothing left to copy, but the service holds its job.
    writeFileSync(join(p.outDir, 'a.take1.mp4'), 'not the video');
    writeFileSync(p.manifest, yaml('a red boat', 'a blue car'));
    const plan = await planJson(p);
    expect(plan.items[0]).toMatchObject({
      id: 'a',
      plan: 'refetch',
      estimate_usd: null,
      reused_from: { item: 'a', take: 1 },
    });
    expect(plan.items[0]!.reason).toContain(`job ${firstJob}`);
    expect(plan.totals).toMatchObject({ to_submit: 0, refetch: 1 });

    const fetches = jobFetches(sandbox).length;
    await expectRerunSendsNothing(sandbox, p, 0);
    expect(
      jobFetches(sandbox)
        .slice(fetches)
        .map((fetch) => fetch.path),
    ).toContain(`/v1/jobs/${firstJob}`);
    // The fetched output is the item's new take; the edited take is kept beside it, and the altered
    // file stays as the person left it, where they left it.
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(first);
    expect(sha256File(join(p.outDir, 'a.take2.mp4'))).toBe(edited);
    expect(readFileSync(join(p.outDir, 'a.take1.mp4'), 'utf8')).toBe('not the video');
    expect(sidecarOf(p, 'a.json')).toMatchObject({
      item: 'a',
      take: 3,
      job_id: firstJob,
      copied_from: { item: 'a', take: 1 },
    });
    expect((await statusJson(p)).items.map((item) => [item.id, item.state, item.job_id])).toEqual([
      ['a', 'done', firstJob],
      ['b', 'done', sidecarOf(p, 'b.json').job_id],
    ]);
    await expectMoneyAgrees(sandbox, p, 'reuse');
    await expectRerunSendsNothing(sandbox, p, 0);
  }, 60_000);

  it('a twin of a request fetched again waits for that fetch and copies it: one GET, no POST', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(yaml('a red boat', 'a blue car'));
    await runOk(p);
    const first = sha256File(join(p.outDir, 'a.mp4'));
    writeFileSync(p.manifest, yaml('a green boat', 'a blue car'));
    await runOk(p);
    rmSync(join(p.outDir, 'a.take1.mp4'));
    writeFileSync(p.manifest, `${yaml('a red boat', 'a blue car')}  - {id: c, prompt: "a red boat"}\n`);
    const plan = await planJson(p);
    expect(plan.items.map((item) => [item.id, item.plan, item.reused_from])).toEqual([
      ['a', 'refetch', { item: 'a', take: 1 }],
      ['b', 'done', undefined],
      ['c', 'reused', { item: 'a', take: null }],
    ]);
    expect(plan.totals).toMatchObject({ to_submit: 0 });

    const fetches = jobFetches(sandbox).length;
    await expectRerunSendsNothing(sandbox, p, 0);
    const job = sidecarOf(p, 'a.take1.json').job_id;
    expect(
      jobFetches(sandbox)
        .slice(fetches)
        .filter((fetch) => fetch.path === `/v1/jobs/${job}`),
    ).toHaveLength(1);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(first);
    expect(sha256File(join(p.outDir, 'c.mp4'))).toBe(first);
    expect(sidecarOf(p, 'c.json')).toMatchObject({
      item: 'c',
      job_id: job,
      copied_from: { item: 'a', take: 3 },
    });
    await expectMoneyAgrees(sandbox, p, 'reuse');
  }, 60_000);

  it('redo still makes a new paid take on purpose', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(yaml('a red boat', 'a blue car'));
    await runOk(p);
    const posts = allPosts(sandbox).length;
    const redo = await runAgainst(sandbox, p, ['--redo', 'a']);
    expect(redo.code, redo.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts + 1);
  }, 60_000);

  it('variants raised after a take was made for the same input pay only for new variants, never copy one', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(yaml('a red boat', 'a blue car'));
    await runOk(p);
    // Variants 2 of the same prompt are different takes: the variant number is part of the request.
    writeFileSync(p.manifest, yaml('a red boat', 'a blue car', 'variants: 2\n'));
    expect((await planJson(p)).totals).toMatchObject({ to_submit: 2, reused: 0 });
    const posts = allPosts(sandbox).length;
    await runOk(p);
    expect(allPosts(sandbox)).toHaveLength(posts + 2);
    // Down to one and back up: nothing is paid again, the second variants' files are theirs.
    const second = sha256File(join(p.outDir, 'a.v2.mp4'));
    writeFileSync(p.manifest, yaml('a red boat', 'a blue car'));
    await expectRerunSendsNothing(sandbox, p, 0);
    writeFileSync(p.manifest, yaml('a red boat', 'a blue car', 'variants: 2\n'));
    await expectRerunSendsNothing(sandbox, p, 0);
    expect(sha256File(join(p.outDir, 'a.v2.mp4'))).toBe(second);
  }, 60_000);

  it('a metadata edit keeps the saved take: the same video, nothing sent, nothing copied', async () => {
    sandbox = await startTestSandbox();
    const p = newProject(yaml('a red boat', 'a blue car'));
    await runOk(p);
    const first = sha256File(join(p.outDir, 'a.mp4'));
    writeFileSync(p.manifest, yaml('a red boat', 'a blue car', 'metadata: {campaign: spring}\n'));
    const plan = await planJson(p);
    expect(plan.items[0]).toMatchObject({
      id: 'a',
      plan: 'done',
      reason: expect.stringContaining('the same video'),
    });
    expect(plan.totals).toMatchObject({ to_submit: 0 });
    await expectRerunSendsNothing(sandbox, p, 0);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(first);
    expect(existsSync(join(p.outDir, 'a.take1.mp4'))).toBe(false);
    expect((await planJson(p)).items[0]).toMatchObject({ id: 'a', plan: 'done' });
  }, 60_000);
});
