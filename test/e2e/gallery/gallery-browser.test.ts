import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { launchChromium, skipBrowserTests } from '../../support/browser.js';
import { runCli } from '../../support/cli.js';
import { type E2eProject, manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';

/**
 * The gallery as a person sees it: a real run against the sandbox, `report --html`, and the page
 * opened from disk (file://) in Debian's chromium under its own Content-Security-Policy.
 */

const XSS = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
const YAML = `${manifestYaml('gal', 'matrix:\n  style: [noir, pastel]\n')}items:
  - {id: calm, prompt: Calm sea at dawn}
  - {id: xss, prompt: '${XSS}'}
  - {id: bad, prompt: "rejected [[fail:content_rejected]]"}
`;

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

  it('loads the metadata of every done item video under the page CSP, with no violation', async () => {
    const done = page.locator('.card[data-state="done"] video');
    expect(await done.count()).toBe(4);
    // readyState 1 is HAVE_METADATA: the browser fetched and parsed the file's header.
    await page.waitForFunction(
      `[...document.querySelectorAll('.card[data-state="done"] video')].every((video) => video.readyState >= 1)`,
      null,
      { timeout: 20_000 },
    );
    const widths = await done.evaluateAll((videos) =>
      videos.map((video) => (video as unknown as { videoWidth: number }).videoWidth),
    );
    expect(widths.every((width) => width > 0)).toBe(true);
    expect(await done.evaluateAll((videos) => videos.map((video) => video.getAttribute('preload')))).toEqual(
      Array(4).fill('metadata'),
    );
    expect(await page.evaluate('window.__csp')).toEqual([]);
    expect(events).toEqual([]);
  });

  it('shows the failed items first, with their code', async () => {
    const states = await page
      .locator('.card')
      .evaluateAll((cards) => cards.map((card) => card.getAttribute('data-state')));
    expect(states).toEqual(['failed', 'failed', 'done', 'done', 'done', 'done']);
    expect(await page.locator('.card[data-state="failed"] .error-code').allTextContents()).toEqual([
      'content_rejected',
      'content_rejected',
    ]);
  });

  it('shows a prompt with <script> and <img onerror> as text and runs none of it', async () => {
    const prompt = page.locator('#item-xss\\.noir .prompt');
    expect(await prompt.textContent()).toBe(XSS);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(1);
    expect(events).toEqual([]);
  });

  it('filters cards by state and by matrix axis', async () => {
    const visible = () =>
      page.locator('.card:not([hidden])').evaluateAll((cards) => cards.map((card) => card.id));
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

  it('turns the ticked takes into the redo command and redo.txt', async () => {
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
    // Failed items have no take to redo.
    expect(await page.locator('.card[data-state="failed"] input.redo-box').count()).toBe(0);
  });
});
