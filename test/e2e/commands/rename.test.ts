import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  type E2eProject,
  expectRerunSendsNothing,
  filesBelow,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sha256File,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

/** A rename is a move, not a purchase (docs/manifest.md, "Renaming an item"). */

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const yaml = (items: string) => `${manifestYaml('ren')}items:\n${items}`;
const THREE = yaml(
  '  - {id: e1, prompt: A beach at sunrise}\n  - {id: e2, prompt: A harbor from above}\n  - {id: e3, prompt: A city at night}\n',
);

const sidecar = (p: E2eProject, name: string) =>
  JSON.parse(readFileSync(join(p.outDir, name), 'utf8')) as { item: string; take: number; job_id: string };

async function planJson(p: E2eProject) {
  const result = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

async function firstRun(p: E2eProject): Promise<void> {
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  const first = await runAgainst(sandbox, p);
  expect(first.code, first.stderr).toBe(0);
}

describe('renaming an item with its request unchanged', () => {
  it('plan says renamed with nothing to pay; run moves files, sidecars and takes and sends nothing', async () => {
    sandbox = await startTestSandbox();
    const p = project('ren', THREE);
    await firstRun(p);
    // A second take of e2, so a kept take moves too.
    expect((await runAgainst(sandbox, p, ['--redo', 'e2'])).code).toBe(0);
    const main = sha256File(join(p.outDir, 'e2.mp4'));
    const take1 = sha256File(join(p.outDir, 'e2.take1.mp4'));
    expect(main).not.toBe(take1);

    writeFileSync(p.manifest, THREE.replace('id: e2,', 'id: harbor-wide,'));
    const plan = await planJson(p);
    expect(plan.items[1]).toEqual({
      id: 'harbor-wide',
      plan: 'renamed',
      renamed_from: 'e2',
      reason: 'the same request as e2: nothing to pay; its saved files take the new name',
      estimate_usd: null,
    });
    expect(plan.renamed).toEqual([{ from: 'e2', to: 'harbor-wide' }]);
    expect(plan.removed).toEqual([]);
    expect(plan.totals).toMatchObject({ new: 0, renamed: 1, done: 2, to_submit: 0, removed: 0 });
    expect(plan.totals.estimate_usd).toBe('0.000000');
    const text = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(text.stdout).toMatch(/~ e2 -> harbor-wide\s+renamed\s+the same request as e2: nothing to pay/);
    expect(text.stdout).toContain('Plan: nothing to submit, 1 renamed (nothing to pay), 2 unchanged.');

    const posts = allPosts(sandbox).length;
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(run.stderr + run.stdout).toContain('e2 -> harbor-wide: renamed');

    expect(sha256File(join(p.outDir, 'harbor-wide.mp4'))).toBe(main);
    expect(sha256File(join(p.outDir, 'harbor-wide.take1.mp4'))).toBe(take1);
    expect(sidecar(p, 'harbor-wide.json')).toMatchObject({ item: 'harbor-wide', take: 2 });
    expect(sidecar(p, 'harbor-wide.take1.json')).toMatchObject({ item: 'harbor-wide', take: 1 });
    expect(filesBelow(p.outDir).filter((name) => name.includes('e2'))).toEqual([]);

    const rows = ledgerRows<{ item_id: string; path: string }>(
      p,
      'SELECT a.item_id, f.path FROM files f JOIN attempts a ON a.id = f.attempt_id ORDER BY a.id',
    );
    expect(rows.filter((row) => row.path.includes('harbor-wide')).map((row) => row.item_id)).toEqual([
      'harbor-wide',
      'harbor-wide',
    ]);
    const events = ledgerRows<{ item_id: string; detail: string }>(
      p,
      "SELECT item_id, detail FROM events WHERE kind = 'renamed' ORDER BY id",
    );
    expect(events.map((event) => event.item_id)).toEqual(['harbor-wide', 'e2']);

    const status = await statusJson(p);
    expect(status.items.map((item) => item.id)).toEqual(['e1', 'harbor-wide', 'e3']);
    expect(status.items[1]).toMatchObject({ state: 'done', attempts: 2 });
    const exported = await runCli(['export', p.manifest], { cwd: p.dir });
    expect(exported.code, exported.stderr).toBe(0);
    const ids = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).id);
    expect(ids).toEqual(['e1', 'harbor-wide', 'e3']);
    expect(exported.stdout).not.toContain('"id":"e2"');

    expect((await planJson(p)).totals).toMatchObject({ done: 3, renamed: 0, removed: 0, to_submit: 0 });
    await expectRerunSendsNothing(sandbox, p, 0);
  });

  it('two identical requests renamed pay nothing and pair as documented', async () => {
    sandbox = await startTestSandbox();
    const twins = (a: string, b: string) =>
      yaml(`  - {id: ${a}, prompt: The same shot}\n  - {id: ${b}, prompt: The same shot}\n`);
    const p = project('ren', twins('a', 'b'));
    await firstRun(p);
    // Two items of one request are bought once: b copies a's take (docs/results.md).
    expect(allPosts(sandbox)).toHaveLength(1);
    const [shaA, shaB] = [sha256File(join(p.outDir, 'a.mp4')), sha256File(join(p.outDir, 'b.mp4'))];
    expect(shaA).toBe(shaB);

    // New ids in manifest order (y, then x) take the removed ones in the order they were paid (a, then b).
    writeFileSync(p.manifest, twins('y', 'x'));
    const plan = await planJson(p);
    expect(plan.renamed).toEqual([
      { from: 'a', to: 'y' },
      { from: 'b', to: 'x' },
    ]);
    expect(plan.totals).toMatchObject({ new: 0, renamed: 2, to_submit: 0 });
    const posts = allPosts(sandbox).length;
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(sha256File(join(p.outDir, 'y.mp4'))).toBe(shaA);
    expect(sha256File(join(p.outDir, 'x.mp4'))).toBe(shaB);
  });

  it('a rename whose request changed too is a new item: paid once', async () => {
    sandbox = await startTestSandbox();
    const p = project('ren', THREE);
    await firstRun(p);
    writeFileSync(
      p.manifest,
      THREE.replace('{id: e3, prompt: A city at night}', '{id: e3-dawn, prompt: A city at dawn}'),
    );
    const plan = await planJson(p);
    expect(plan.items[2]).toMatchObject({ id: 'e3-dawn', plan: 'new' });
    expect(plan.renamed).toEqual([]);
    expect(plan.removed).toEqual([{ id: 'e3', state: 'done', files: ['out/ren/e3.mp4'] }]);
    const posts = allPosts(sandbox).length;
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts + 1);
    expect(existsSync(join(p.outDir, 'e3.mp4'))).toBe(true);
    expect(existsSync(join(p.outDir, 'e3-dawn.mp4'))).toBe(true);
  });

  it('a file the ledger did not write at the new name holds the item back, unpaid and not renamed', async () => {
    sandbox = await startTestSandbox();
    const p = project('ren', THREE);
    await firstRun(p);
    const before = sha256File(join(p.outDir, 'e1.mp4'));
    writeFileSync(p.manifest, THREE.replace('id: e1,', 'id: beach,'));
    writeFileSync(join(p.outDir, 'beach.mp4'), 'my own file');

    const plan = await planJson(p);
    expect(plan.warnings).toContainEqual(
      expect.stringMatching(/^beach: run will not rename it: out\/ren\/beach\.mp4/),
    );
    const posts = allPosts(sandbox).length;
    const held = await runAgainst(sandbox, p);
    expect(held.code).toBe(1);
    expect(held.stderr + held.stdout).toMatch(/beach: not renamed from e1 and not submitted: in the way/);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(readFileSync(join(p.outDir, 'beach.mp4'), 'utf8')).toBe('my own file');
    expect(sha256File(join(p.outDir, 'e1.mp4'))).toBe(before);

    rmSync(join(p.outDir, 'beach.mp4'));
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(sha256File(join(p.outDir, 'beach.mp4'))).toBe(before);
    expect(sidecar(p, 'beach.json')).toMatchObject({ item: 'beach' });
  });
});
