import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { launchChromium, skipBrowserTests } from '../../support/browser.js';
import { runCli } from '../../support/cli.js';
import { type E2eProject, manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';
import { pollPage, videoFacts } from '../../support/page-poll.js';

/**
 * The morning review (docs/gallery.md, "Variants and keepers"), as a person does it: a batch with
 * `variants: 3` run by the real CLI against the sandbox, the gallery the run itself left opened
 * from disk in Debian's chromium, the three takes of an item side by side, a click on "keep",
 * keep.txt saved from the page, then `keep @keep.txt` and `export --kept` give that variant's file.
 * GALLERY_SCREENSHOT=FILE saves a picture of the page.
 */

const YAML = `${manifestYaml('vb', 'variants: 3\n')}items:
  - {id: fox, prompt: "A fox at dusk, take {variant}"}
  - {id: owl, prompt: An owl, variants: 1}
`;

describe.skipIf(skipBrowserTests)('variants side by side and the keeper picker, in chromium', () => {
  let sandbox: SandboxHandle;
  let p: E2eProject;
  let browser: Browser;
  let page: Page;
  const events: string[] = [];
  const open = async () => {
    await page.goto(pathToFileURL(join(p.outDir, 'index.html')).href);
    await page.locator('#cards[data-ready="true"]').waitFor({ state: 'attached' });
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    p = project('vb', YAML);
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    // The page is the one the run left: no report --html in between.
    expect(run.stdout).toContain('gallery: out/vb/index.html\n');
    browser = await launchChromium();
    const context = await browser.newContext({
      acceptDownloads: true,
      viewport: { width: 1100, height: 640 },
    });
    page = await context.newPage();
    page.on('pageerror', (error) => events.push(`pageerror: ${error.message}`));
    await page.addInitScript(`
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', (event) =>
        window.__csp.push(event.violatedDirective + ' ' + event.blockedURI));
    `);
    await open();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
    if (p) rmSync(p.dir, { recursive: true, force: true });
  });

  it("shows an item's three variants side by side in one tile, each with its label, state and video", async () => {
    expect(await page.locator('.card').evaluateAll((cards) => cards.map((card) => card.id))).toEqual([
      'item-fox',
      'item-owl',
    ]);
    const fox = page.locator('#item-fox');
    expect(
      await fox.locator('.variant').evaluateAll((cells) => cells.map((c) => c.getAttribute('data-id'))),
    ).toEqual(['fox', 'fox.v2', 'fox.v3']);
    expect(await fox.locator('.vlabel').allTextContents()).toEqual(['v1', 'v2', 'v3']);
    expect(await fox.locator('.variant .badge').allTextContents()).toEqual(['done', 'done', 'done']);
    const videos = await pollPage(
      page,
      (pg) => videoFacts(pg, '#item-fox video'),
      (list) => list.length === 3 && list.every((video) => video.readyState >= 1),
    );
    expect(videos.map((video) => video.src)).toEqual(['fox.mp4', 'fox.v2.mp4', 'fox.v3.mp4']);
    // Side by side: one row, left to right.
    const boxes = await fox.locator('video').evaluateAll((list) =>
      list.map((video) => {
        const box = video.getBoundingClientRect();
        return { x: box.x, y: box.y };
      }),
    );
    expect(new Set(boxes.map((box) => Math.round(box.y))).size).toBe(1);
    expect(boxes[0]!.x < boxes[1]!.x && boxes[1]!.x < boxes[2]!.x).toBe(true);
    // An item asked once looks as it always did: one video, no variant labels.
    expect(await page.locator('#item-owl .variant').count()).toBe(0);
    expect(await page.locator('#item-owl video').count()).toBe(1);
    expect(await page.locator('#shown-count').textContent()).toBe('2');
  });

  it('picks one keeper per item with a click, changes it with another, and saves keep.txt', async () => {
    const keepOf = (id: string) => page.locator(`#item-fox .variant[data-id="${id}"] button.keep`);
    const command = page.locator('#keep-command');
    await keepOf('fox.v3').click();
    expect(await command.textContent()).toBe('mediabatch keep batch.yaml fox:3');
    await keepOf('fox.v2').click();
    expect(await command.textContent()).toBe('mediabatch keep batch.yaml fox:2');
    expect(await page.locator('#item-fox button.keep').allTextContents()).toEqual(['keep', 'kept', 'keep']);
    expect(await keepOf('fox.v2').getAttribute('aria-pressed')).toBe('true');
    // A click on "keep" neither opens the item nor ticks a redo box; the redo picker still works.
    expect(await page.locator('dialog#viewer').isVisible()).toBe(false);
    await page.locator('#item-fox input.redo-box[data-id="fox.v3"]').check();
    expect(await page.locator('#redo-command').textContent()).toBe('mediabatch run batch.yaml --redo fox.v3');
    await page.locator('#item-fox input.redo-box[data-id="fox.v3"]').uncheck();

    if (process.env.GALLERY_SCREENSHOT) await page.screenshot({ path: process.env.GALLERY_SCREENSHOT });
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#keep-file').click()]);
    expect(download.suggestedFilename()).toBe('keep.txt');
    await download.saveAs(join(p.dir, 'keep.txt'));
    expect(readFileSync(join(p.dir, 'keep.txt'), 'utf8')).toBe('fox:2\n');
    expect(events).toEqual([]);
    expect(await page.evaluate('window.__csp')).toEqual([]);
  });

  it('keep @keep.txt takes the pick, export --kept gives that variant, and the next page marks it', async () => {
    const kept = await runCli(['keep', p.manifest, '@keep.txt'], { cwd: p.dir });
    expect(kept.code, kept.stderr).toBe(0);
    const exported = await runCli(['export', p.manifest, '--kept'], { cwd: p.dir });
    expect(exported.code, exported.stderr).toBe(0);
    const records = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; files: Array<{ path: string }> });
    const fox = records.filter((record) => record.id.startsWith('fox'));
    expect(fox.map((record) => [record.id, record.files.map((file) => file.path)])).toEqual([
      ['fox', ['out/vb/fox.v2.mp4']], // the item, with the kept variant's file
    ]);

    const report = await runCli(['report', p.manifest, '--html'], { cwd: p.dir });
    expect(report.code, report.stderr).toBe(0);
    await open();
    expect(await page.locator('#item-fox button.keep').allTextContents()).toEqual(['keep', 'kept', 'keep']);
    // The larger view offers every take, and marks the kept one there too.
    await page.locator('#item-fox .variant[data-id="fox"] button.open').click();
    expect(await page.locator('#viewer .variant-block').count()).toBe(3);
    expect(await page.locator('#viewer .variant-block[data-id="fox.v2"] button.keep').textContent()).toBe(
      'kept',
    );
    await page.keyboard.press('Escape');
  });
});
