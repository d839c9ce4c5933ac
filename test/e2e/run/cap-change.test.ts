import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  attemptRows,
  type E2eProject,
  expectMoneyAgrees,
  filesBelow,
  jobsOfItem,
  killRunWhen,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sandboxMoney,
  sha256File,
  startTestSandbox,
  statusJson,
  waitUntil,
} from '../../support/e2e.js';

/**
 * Lowering max_cost_usd, as budget refusals advise, is no new request for an item whose job
 * already answered it: nothing is generated or paid again (docs/manifest.md, Editing an item).
 */

let sandbox: SandboxHandle | undefined;
let made: E2eProject | undefined;
afterEach(async () => {
  await sandbox?.close();
  if (made) rmSync(made.dir, { recursive: true, force: true });
  sandbox = undefined;
  made = undefined;
});

const CAP_WORDS = 'only max_cost_usd changed: the same video, not paid for again';

const manifest = (cap: string, prompt = (id: string) => `shot ${id}`) =>
  `${manifestYaml('capped', `max_cost_usd: "${cap}"\n`)}items:\n${['a', 'b', 'c']
    .map((id) => `  - {id: ${id}, prompt: "${prompt(id)}"}`)
    .join('\n')}\n`;

/** Every output and sidecar with its bytes' hash: what "byte-identical" is checked against. */
const outputs = (p: E2eProject) =>
  Object.fromEntries(filesBelow(p.outDir).map((path) => [path, sha256File(join(p.outDir, path))]));

const plan = async (p: E2eProject) => {
  const result = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as {
    items: Array<Record<string, unknown>>;
    totals: Record<string, unknown>;
  };
};

describe('mediabatch run: max_cost_usd lowered after the items are done', () => {
  it('plans and runs nothing for done items, then sends exactly the one whose prompt changed', async () => {
    sandbox = await startTestSandbox();
    const p = project('capped', manifest('0.50'));
    made = p;
    const first = await runAgainst(sandbox, p);
    expect(first.code, first.stderr).toBe(0);
    const files = outputs(p);
    expect(Object.keys(files).filter((path) => path.endsWith('.mp4'))).toHaveLength(3);
    const charged = sandboxMoney(sandbox, 'capped');
    const status = await statusJson(p);

    writeFileSync(p.manifest, manifest('0.20'));
    const lowered = await plan(p);
    expect(lowered.items).toEqual(
      ['a', 'b', 'c'].map((id) => ({ id, plan: 'done', reason: CAP_WORDS, estimate_usd: null })),
    );
    expect(lowered.totals).toMatchObject({ done: 3, changed: 0, to_submit: 0 });
    const text = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(
      text.stdout
        .split('\n')
        .slice(2, 5)
        .map((line) => line.replace(/\s+/g, ' ')),
    ).toEqual(['a', 'b', 'c'].map((id) => `= ${id} unchanged (done) ${CAP_WORDS}`));

    const posts = allPosts(sandbox).length;
    const again = await runAgainst(sandbox, p);
    expect(again.code, again.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(sandboxMoney(sandbox, 'capped')).toEqual(charged);
    expect(outputs(p)).toEqual(files);
    expect(await statusJson(p)).toEqual(status);

    // A prompt changed as well: that item, and only it, goes out, with the new cap.
    writeFileSync(
      p.manifest,
      manifest('0.20', (id) => (id === 'b' ? 'shot b at dusk' : `shot ${id}`)),
    );
    const edited = await plan(p);
    expect(edited.items.map((item) => [item.id, item.plan])).toEqual([
      ['a', 'done'],
      ['b', 'changed'],
      ['c', 'done'],
    ]);
    expect(edited.items[1]).toMatchObject({ changed_fields: ['input.prompt'] });
    const third = await runAgainst(sandbox, p);
    expect(third.code, third.stderr).toBe(0);
    const sent = allPosts(sandbox).slice(posts);
    expect(sent).toHaveLength(1);
    expect(jobsOfItem(sandbox, 'capped', 'b')).toHaveLength(2);
    for (const id of ['a', 'c']) expect(jobsOfItem(sandbox, 'capped', id)).toHaveLength(1);
    const latestB = attemptRows(p)
      .filter((row) => row.item_id === 'b')
      .at(-1)!;
    expect(JSON.parse(latestB.request_body)).toMatchObject({
      input: { prompt: 'shot b at dusk' },
      max_cost_usd: '0.200000',
    });
    for (const id of ['a', 'c']) {
      for (const ext of ['mp4', 'json']) expect(outputs(p)[`${id}.${ext}`]).toBe(files[`${id}.${ext}`]);
    }
    await expectMoneyAgrees(sandbox, p, 'capped');
  });

  it('run --redo of such an item sends the new cap, and from then on the ledger records that request', async () => {
    sandbox = await startTestSandbox();
    const p = project('capped', manifest('0.50'));
    made = p;
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    writeFileSync(p.manifest, manifest('0.20'));
    const posts = allPosts(sandbox).length;
    const redo = await runAgainst(sandbox, p, ['--redo', 'a']);
    expect(redo.code, redo.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts + 1);
    const latestA = attemptRows(p)
      .filter((row) => row.item_id === 'a')
      .at(-1)!;
    expect(JSON.parse(latestA.request_body).max_cost_usd).toBe('0.200000');
    expect(jobsOfItem(sandbox, 'capped', 'a')).toHaveLength(2);
    // The redo's request is the manifest's now: a plain done item, no cap words.
    const after = await plan(p);
    expect(after.items).toEqual([
      { id: 'a', plan: 'done', estimate_usd: null },
      { id: 'b', plan: 'done', reason: CAP_WORDS, estimate_usd: null },
      { id: 'c', plan: 'done', reason: CAP_WORDS, estimate_usd: null },
    ]);
    await expectMoneyAgrees(sandbox, p, 'capped');
  });

  it('a job still running when the cap was lowered is followed to its end, not sent again', async () => {
    sandbox = await startTestSandbox({ running_seconds: { min: 2, max: 2 } });
    const p = project('capped', manifest('0.50'));
    made = p;
    const accepted = () =>
      ledgerRows<{ n: number }>(p, "SELECT COUNT(*) AS n FROM attempts WHERE state = 'accepted'")[0]!.n === 3;
    await killRunWhen(sandbox, p, () => waitUntil(accepted, 10_000, 'three accepted jobs'));
    writeFileSync(p.manifest, manifest('0.20'));
    const planned = await plan(p);
    expect(planned.items.map((item) => item.plan)).toEqual(['in_flight', 'in_flight', 'in_flight']);
    for (const item of planned.items) expect(item.reason).toContain(CAP_WORDS);
    const posts = allPosts(sandbox).length;
    const resumed = await runAgainst(sandbox, p);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
    for (const id of ['a', 'b', 'c']) expect(jobsOfItem(sandbox, 'capped', id)).toHaveLength(1);
    expect(filesBelow(p.outDir).filter((path) => path.endsWith('.mp4'))).toEqual(['a.mp4', 'b.mp4', 'c.mp4']);
    expect((await statusJson(p)).items.map((item) => item.state)).toEqual(['done', 'done', 'done']);
    await expectMoneyAgrees(sandbox, p, 'capped');
  });
});
