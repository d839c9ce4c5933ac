import { rmSync } from 'node:fs';
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
 * The gallery as a person sees it: a real run against the sandbox, `report --html`, and the page
 * opened from disk (file://) in Debian's chromium under its own Content-Security-Policy: the
 * contact sheet's tiles, the larger view of one item, the filters and the redo picker.
 * test/e2e/gallery/gallery-scale.test.ts holds the same page to 10,000 items.
 */

const XSS = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
const YAML = `${manifestYaml('gal', 'matrix:\n  style: [noir, pastel]\n')}items:
  - {id: calm, prompt: Calm sea at dawn}
  - {id: xss, prompt: '${XSS}'}
  - {id: bad, prompt: "rejected [[fail:content_rejected]]"}
`;
const IDS = ['bad.noir', 'bad.pastel', 'calm.noir', 'calm.pastel', 'xss.noir', 'xss.pastel'];

describe.skipIf(skipBrowserTests)('the gallery in chromium', () => {
  let sandbox: SandboxHandle;
  let p: E2eProject;
  let browser: Browser;
  let page: Page;
  const events: string[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    p = project('gal', YAML);
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1); // two items rejected
    const report = await runCli(['report', p.manifest, '--html'], { cwd: p.dir });
    expect(report.code, report.stderr).toBe(0);
    const htmlPath = join(p.outDir, 'index.html');
    expect(report.stdout).toBe(`wrote the gallery of gal (6 items) to ${htmlPath}\n`);

    browser = await launchChromium();
    page = await browser.newPage();
    page.on('pageerror', (error) => events.push(`pageerror: ${error.message}`));
    page.on('dialog', (dialog) => {
      events.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    // Collected from the first instant, so a violation while the page loads is seen too.
    await page.addInitScript(`
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', (event) =>
        window.__csp.push(event.violatedDirective + ' ' + event.blockedURI));
    `);
    await page.goto(pathToFileURL(htmlPath).href);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
    if (p) rmSync(p.dir, { recursive: true, force: true });
  });

  it('draws a tile per item, failed first, and loads the videos of the tiles in view under the CSP', async () => {
    const states = await page
      .locator('.card')
      .evaluateAll((cards) => cards.map((card) => card.getAttribute('data-state')));
    expect(states).toEqual(['failed', 'failed', 'done', 'done', 'done', 'done']);
    expect(await page.locator('.card[data-state="failed"] .error-code').allTextContents()).toEqual([
      'content_rejected',
      'content_rejected',
    ]);
    expect(await page.locator('.card .id').allTextContents()).toEqual(IDS);
    // Every tile is in view: each done one gets its first frame (readyState 1, HAVE_METADATA:
    // the header was fetched and parsed) from a file beside the page; a failed one has no video.
    const videos = await pollPage(
      page,
      (p) => videoFacts(p, '.card video'),
      (list) => list.length === 4 && list.every((video) => video.readyState >= 1),
    );
    expect(videos.map((video) => [video.src, video.preload, video.controls])).toEqual(
      ['calm.noir', 'calm.pastel', 'xss.noir', 'xss.pastel'].map((id) => [`${id}.mp4`, 'metadata', false]),
    );
    expect(videos.every((video) => video.videoWidth > 0)).toBe(true);
    expect(await page.locator('.card[data-state="failed"] video').count()).toBe(0);
    expect(await page.evaluate('window.__csp')).toEqual([]);
    expect(events).toEqual([]);
  });

  it('opens a tile larger: every take as a player, the prompt, the cost; closing frees the players', async () => {
    await page.locator('#item-calm\\.pastel').click();
    const viewer = page.locator('dialog#viewer');
    expect(await viewer.isVisible()).toBe(true);
    expect(await page.locator('#viewer-id').textContent()).toBe('calm.pastel');
    expect(await viewer.locator('.prompt').textContent()).toBe('Calm sea at dawn');
    expect(await viewer.locator('.params li.axis').allTextContents()).toEqual(['style: pastel']);
    const players = await pollPage(
      page,
      (p) => videoFacts(p, '#viewer video'),
      (list) => list.length === 1 && list[0]!.readyState >= 1,
    );
    expect(players[0]).toMatchObject({ src: 'calm.pastel.mp4', preload: 'metadata', controls: true });
    expect(await viewer.locator('.take-meta').textContent()).toMatch(/^take 1 · job_\w+ · \$\d+\.\d\d/);
    await page.keyboard.press('Escape');
    expect(await viewer.isVisible()).toBe(false);
    // A dialog's close event is a queued task: the players go when it runs.
    await expect.poll(() => page.locator('#viewer video').count(), { timeout: 5_000 }).toBe(0);

    await page.locator('#item-bad\\.noir').click();
    expect(await viewer.locator('.error-code').textContent()).toBe('content_rejected');
    expect(await page.locator('#viewer-redo').isVisible()).toBe(false); // no take to redo
    await page.locator('#viewer-close').click();
    expect(await viewer.isVisible()).toBe(false);
  });

  it('opens the item a link names (index.html#item-ID)', async () => {
    const linked = await browser.newPage();
    await linked.goto(`${pathToFileURL(join(p.outDir, 'index.html')).href}#item-xss.pastel`);
    await linked.locator('#cards[data-ready="true"]').waitFor({ state: 'attached' });
    expect(await linked.locator('dialog#viewer').isVisible()).toBe(true);
    expect(await linked.locator('#viewer-id').textContent()).toBe('xss.pastel');
    await linked.close();
  });

  it('shows a prompt with <script> and <img onerror> as text and runs none of it', async () => {
    expect(await page.locator('#item-xss\\.noir').getAttribute('title')).toBe(XSS);
    await page.locator('#item-xss\\.noir').click();
    expect(await page.locator('#viewer .prompt').textContent()).toBe(XSS);
    await page.keyboard.press('Escape');
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
    // One script runs (the page's own, by its hash); the other is the data block, never run.
    expect(await page.locator('script').count()).toBe(2);
    expect(await page.locator('script[type="application/json"]').count()).toBe(1);
    expect(events).toEqual([]);
  });

  it('filters tiles by state and by matrix axis', async () => {
    const visible = () => page.locator('.card').evaluateAll((cards) => cards.map((card) => card.id));
    const state = page.locator('select[data-filter="data-state"]');
    const style = page.locator('select[data-filter="data-axis-0"]');
    await state.selectOption('failed');
    expect(await visible()).toEqual(['item-bad.noir', 'item-bad.pastel']);
    await state.selectOption('done');
    expect(await visible()).toEqual([
      'item-calm.noir',
      'item-calm.pastel',
      'item-xss.noir',
      'item-xss.pastel',
    ]);
    await style.selectOption('pastel');
    expect(await visible()).toEqual(['item-calm.pastel', 'item-xss.pastel']);
    expect(await page.locator('#shown-count').textContent()).toBe('2');
    await state.selectOption('');
    await style.selectOption('');
    expect(await visible()).toHaveLength(6);
  });

  it('turns the ticked takes into the redo command and redo.txt, from the tiles or the larger view', async () => {
    const command = page.locator('#redo-command');
    expect(await page.locator('#redo-copy').isDisabled()).toBe(true);
    await page.locator('input.redo-box[data-id="xss.noir"]').check();
    await page.locator('input.redo-box[data-id="calm.pastel"]').check();
    expect(await command.textContent()).toBe('mediabatch run batch.yaml --redo calm.pastel xss.noir');
    const href = await page.locator('#redo-file').getAttribute('href');
    expect(href).toBe(`data:text/plain;charset=utf-8,${encodeURIComponent('calm.pastel\nxss.noir\n')}`);
    expect(await page.locator('#redo-file').getAttribute('download')).toBe('redo.txt');
    expect(await page.locator('#redo-copy').isDisabled()).toBe(false);
    await page.locator('input.redo-box[data-id="xss.noir"]').uncheck();
    expect(await command.textContent()).toBe('mediabatch run batch.yaml --redo calm.pastel');
    // Ticking the box did not open the tile.
    expect(await page.locator('dialog#viewer').isVisible()).toBe(false);
    // Failed items have no take to redo.
    expect(await page.locator('.card[data-state="failed"] input.redo-box').count()).toBe(0);

    // The larger view's box is the same choice as the tile's.
    await page.locator('#item-calm\\.noir').click();
    await page.locator('#viewer-redo').check();
    await page.keyboard.press('Escape');
    expect(await page.locator('input.redo-box[data-id="calm.noir"]').isChecked()).toBe(true);
    expect(await command.textContent()).toBe('mediabatch run batch.yaml --redo calm.noir calm.pastel');
    await page.locator('#item-calm\\.pastel').click();
    expect(await page.locator('#viewer-redo').isChecked()).toBe(true);
    await page.locator('#viewer-redo').uncheck();
    await page.keyboard.press('Escape');
    expect(await command.textContent()).toBe('mediabatch run batch.yaml --redo calm.noir');
    expect(events).toEqual([]);
    expect(await page.evaluate('window.__csp')).toEqual([]);
  });
});
