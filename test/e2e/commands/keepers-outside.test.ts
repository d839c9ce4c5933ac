import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  type E2eProject,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';

/**
 * Keepers stay visible (issue 38, item 5): a keeper whose variant or item the manifest no longer
 * asks for is named by status and plan and exported by `export --kept` as outside the manifest;
 * asking for it again makes it the item's keeper again; `export --kept` checks each kept file.
 */

let sandbox: SandboxHandle;
const projects: E2eProject[] = [];

beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  for (const p of projects) rmSync(p.dir, { recursive: true, force: true });
});

const yamlWith = (name: string, variants: number, ids: readonly string[]) =>
  `version: 1\nname: ${name}\ninput: {seconds: 2, definition: 480p, seed: "{variant}"}\nvariants: ${variants}\nmax_cost_usd: "0.05"\nconcurrency: 3\nitems:\n${ids.map((id) => `  - {id: ${id}, prompt: "Shot ${id}, take {variant}"}`).join('\n')}\n`;

/** A batch `name` of `ids` with 3 variants each, run, with the keepers `picks` recorded. */
async function keptBatch(name: string, ids: readonly string[], picks: readonly string[]) {
  const p = project(name, yamlWith(name, 3, ids));
  projects.push(p);
  const run = await runAgainst(sandbox, p);
  expect(run.code, run.stderr).toBe(0);
  const cli = (...args: string[]) =>
    runCli([args[0]!, p.manifest, ...args.slice(1)], { cwd: p.dir, env: cliEnv(sandbox) });
  const kept = await cli('keep', ...picks);
  expect(kept.code, kept.stderr).toBe(0);
  const edit = (variants: number, only: readonly string[] = ids) =>
    writeFileSync(p.manifest, yamlWith(name, variants, only));
  return { p, cli, edit };
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('keepers outside the manifest', () => {
  it('variants 3 -> 2 -> 3 with a keeper on variant 3: named while outside, the item keeper again after, nothing sent', async () => {
    const { p, cli, edit } = await keptBatch('lowered', ['hero', 'detail'], ['hero:3', 'detail:1']);
    const posts = allPosts(sandbox).length;
    edit(2);

    const outside = {
      id: 'hero',
      item: 'hero.v3',
      variant: 3,
      take: 1,
      why: 'variant_not_asked',
      paths: ['out/lowered/hero.v3.mp4'],
    };
    const status = await cli('status', '--json');
    expect(JSON.parse(status.stdout).keepers_outside_manifest).toEqual([outside]);
    const plan = await cli('plan', '--json');
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout).keepers_outside_manifest).toEqual([outside]);
    for (const text of [(await cli('status')).stdout, (await cli('plan')).stdout])
      expect(text).toMatch(
        /1 keeper outside the manifest.*\n {2}hero: hero\.v3 take 1, out\/lowered\/hero\.v3\.mp4/,
      );

    const exported = await cli('export', '--kept');
    expect(exported.code, exported.stderr).toBe(0);
    expect(lines(exported.stdout).map((r) => [r.id, r.item, r.in_manifest])).toEqual([
      ['hero', 'hero.v3', false],
      ['detail', 'detail', true],
    ]);
    expect(exported.stderr).toContain('1 kept take outside the manifest');
    // The plain export's record of the variant no longer asked for says it is the kept take.
    const plain = lines((await cli('export')).stdout).find((r) => r.id === 'hero.v3');
    expect(plain).toMatchObject({ in_manifest: false, kept: true });
    // A run with two variants leaves the third alone: nothing is sent, its file stays.
    const lowered = await runAgainst(sandbox, p);
    expect(lowered.code, lowered.stderr).toBe(0);
    expect(existsSync(join(p.outDir, 'hero.v3.mp4'))).toBe(true);

    edit(3);
    expect(JSON.parse((await cli('status', '--json')).stdout).keepers_outside_manifest).toEqual([]);
    const raised = await runAgainst(sandbox, p);
    expect(raised.code, raised.stderr).toBe(0);
    const again = await cli('export', '--kept');
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(lines(again.stdout).map((r) => [r.id, r.item, r.in_manifest])).toEqual([
      ['hero', 'hero.v3', true],
      ['detail', 'detail', true],
    ]);
    expect(allPosts(sandbox)).toHaveLength(posts);

    // Lowered again, another keeper: the sidecar of the take kept until now says it is not kept.
    edit(2);
    expect((await cli('keep', 'hero:1')).code).toBe(0);
    const sidecar = (name: string) => JSON.parse(readFileSync(join(p.outDir, name), 'utf8')).kept;
    expect([sidecar('hero.json'), sidecar('hero.v3.json')]).toEqual([true, false]);
  });

  it('an item removed from the manifest keeps its keeper on record', async () => {
    const { cli, edit } = await keptBatch('removed', ['hero', 'detail'], ['hero:2', 'detail:3']);
    const posts = allPosts(sandbox).length;
    edit(3, ['hero']);
    const removed = { id: 'detail', item: 'detail.v3', variant: 3, take: 1, why: 'item_not_asked' };
    const status = JSON.parse((await cli('status', '--json')).stdout);
    expect(status.keepers_outside_manifest).toEqual([{ ...removed, paths: ['out/removed/detail.v3.mp4'] }]);
    const exported = await cli('export', '--kept');
    expect(exported.code, exported.stderr).toBe(0);
    expect(lines(exported.stdout).map((r) => [r.id, r.item, r.variant, r.in_manifest])).toEqual([
      ['hero', 'hero.v2', 2, true],
      ['detail', 'detail.v3', 3, false],
    ]);
    const csv = await cli('export', '--kept', '--format', 'csv');
    expect(csv.stdout.split('\n')[0]).toBe(
      'id,item,variant,take,job_id,net_cost_usd,completed_at,files,in_manifest',
    );
    expect(allPosts(sandbox)).toHaveLength(posts);
  });

  it('export --kept names a kept file deleted and one altered, exits 1, and writes every record', async () => {
    const { p, cli } = await keptBatch(
      'checked',
      ['hero', 'detail', 'pour'],
      ['hero:2', 'detail:3', 'pour:1'],
    );
    rmSync(join(p.outDir, 'hero.v2.mp4'));
    // Same size, other bytes: only the SHA-256 tells.
    const altered = join(p.outDir, 'detail.v3.mp4');
    const bytes = readFileSync(altered);
    bytes[bytes.length - 1]! ^= 0xff;
    writeFileSync(altered, bytes);

    const exported = await cli('export', '--kept');
    expect(exported.code).toBe(1);
    expect(lines(exported.stdout).map((r) => r.item)).toEqual(['hero.v2', 'detail.v3', 'pour']);
    expect(exported.stderr).toContain('2 kept files not as saved');
    expect(exported.stderr).toContain('hero: out/checked/hero.v2.mp4 missing');
    expect(exported.stderr).toContain('detail: out/checked/detail.v3.mp4 altered');
    const out = join(p.dir, 'kept.jsonl');
    const toFile = await cli('export', '--kept', '--out', out);
    expect(toFile.code).toBe(1);
    expect(lines(readFileSync(out, 'utf8')).map((r) => r.item)).toEqual(['hero.v2', 'detail.v3', 'pour']);
  });
});
