import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadManifest, run } from '../../../src/index.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { type E2eProject, manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';
import { galleryData } from '../../support/gallery-data.js';

/**
 * `run` leaves the batch's gallery current (docs/gallery.md, "After every run"): the real CLI
 * against the sandbox writes <output dir>/index.html as it ends, refreshes it after the manifest
 * changed, and leaves a foreign index.html alone with a warning, its exit code what the items made.
 */

const yaml = (items: string[]) =>
  `${manifestYaml('rg')}items:\n${items.map((line) => `  - ${line}\n`).join('')}`;
const CALM = '{id: calm, prompt: Calm sea}';
const FOX = '{id: fox, prompt: A fox}';
const BAD = '{id: bad, prompt: "rejected [[fail:content_rejected]]"}';

describe('run writes the gallery when it ends', () => {
  let sandbox: SandboxHandle;
  let p: E2eProject;
  let page: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    p = project('rg', yaml([CALM, FOX]));
    page = join(p.outDir, 'index.html');
  });
  afterAll(async () => {
    await sandbox?.close();
    if (p) rmSync(p.dir, { recursive: true, force: true });
  });

  const tiles = () => galleryData(readFileSync(page, 'utf8')).tiles.map((tile) => [tile.id, tile.state]);

  it('writes index.html and ends with one line saying where', async () => {
    const first = await runAgainst(sandbox, p);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trimEnd().split('\n').at(-1)).toBe('gallery: out/rg/index.html');
    expect(tiles()).toEqual([
      ['calm', 'done'],
      ['fox', 'done'],
    ]);
  });

  it('refreshes it after the manifest changed: the page shows the new state', async () => {
    writeFileSync(p.manifest, yaml([CALM, FOX, BAD]));
    const second = await runAgainst(sandbox, p);
    expect(second.code, second.stderr).toBe(1); // one item rejected
    expect(second.stdout).toContain('gallery: out/rg/index.html\n');
    expect(tiles()).toEqual([
      ['bad', 'failed'],
      ['calm', 'done'],
      ['fox', 'done'],
    ]);
  });

  it('leaves an index.html it did not write alone, says so, and keeps the exit code', async () => {
    const notes = '<!DOCTYPE html>\n<title>my own notes</title>\n';
    writeFileSync(page, notes);
    writeFileSync(p.manifest, yaml([CALM, FOX]));
    const third = await runAgainst(sandbox, p);
    expect(third.code, third.stderr).toBe(0);
    expect(readFileSync(page, 'utf8')).toBe(notes);
    expect(third.stdout).not.toContain('gallery:');
    expect(third.stderr).toContain(
      'mediabatch run: out/rg/index.html exists and is not a gallery page mediabatch wrote, so it was left as it is and no gallery was written',
    );
  });

  it('from the library: the result names the page, and `gallery: false` writes none', async () => {
    rmSync(page);
    const manifest = loadManifest(p.manifest);
    const options = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, env: {} };
    const skipped = await run(manifest, { ...options, gallery: false }).result;
    expect(skipped).toMatchObject({ outcome: 'done', gallery: null });
    expect(existsSync(page)).toBe(false);
    const written = await run(manifest, options).result;
    expect(written.gallery).toEqual({ written: page, items: 2, linksExpireAt: null, pageUrl: null });
    expect(tiles()).toEqual([
      ['calm', 'done'],
      ['fox', 'done'],
    ]);
  });
});
