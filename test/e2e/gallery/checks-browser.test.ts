import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { launchChromium, skipBrowserTests } from '../../support/browser.js';
import { manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';

/** Fails a take whose prompt asks for fog, with a score; passes the others with none. */
const FOG_JS = `
const asked = JSON.parse(require('node:fs').readFileSync(0, 'utf8')).prompt;
if (asked.includes('fog')) console.log(JSON.stringify({ pass: false, score: 0.25, reason: 'no subject in the fog' }));
`;

const YAML = `${manifestYaml('judged', 'checks:\n  - name: subject\n    run: [node, fog.js]\n')}items:
  - {id: beach, prompt: A beach at noon, input: {orientation: "16:9"}}
  - {id: fog, prompt: A harbor in fog, input: {orientation: "16:9"}}
  - {id: short, prompt: "A kettle [[short-clip]]", input: {orientation: "16:9"}}
`;

const shownIds = (page: Page) =>
  page.locator('#cards .card').evaluateAll((cards) => cards.map((card) => card.id));
const badgeOf = (page: Page, id: string) => page.locator(`#item-${id} .thumb .check-failed`);

/**
 * Issue 51: the gallery shows each take's check. Run by the real CLI against the sandbox (a check
 * of your own failing one take with a score, the built-in check failing a short clip), the page the
 * run left opened in chromium: a badge with the reason on each failed take, and a filter by the
 * check's outcome beside the state filter.
 */
describe.skipIf(skipBrowserTests)("the gallery shows each take's check, in chromium", () => {
  let sandbox: SandboxHandle | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('badges a failed take with its reason and score, and filters by the check', async () => {
    sandbox = await startTestSandbox();
    const p = project('judged', YAML, { 'fog.js': FOG_JS });
    try {
      const run = await runAgainst(sandbox, p);
      expect(run.code, run.stderr).toBe(1);
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
      await page.goto(pathToFileURL(join(p.outDir, 'index.html')).href);
      await page.locator('#cards[data-ready="true"]').waitFor({ state: 'attached' });

      expect(await badgeOf(page, 'fog').textContent()).toBe(
        'check failed (score 0.25): subject: no subject in the fog',
      );
      expect(await badgeOf(page, 'short').textContent()).toBe(
        'check failed: 1 s long, 2 s asked for (within 0.5 s)',
      );
      expect(await badgeOf(page, 'beach').count()).toBe(0);
      // The whole reason is there to read where the tile cuts it short.
      expect(await badgeOf(page, 'short').getAttribute('title')).toBe(
        'check failed: 1 s long, 2 s asked for (within 0.5 s)',
      );

      // The filter offers the outcomes the page holds, beside the state filter.
      const filter = page.locator('select[data-filter="data-check"]');
      expect(
        await filter.locator('option').evaluateAll((options) => options.map((o) => o.textContent)),
      ).toEqual(['all', 'failed', 'passed']);
      await filter.selectOption('failed');
      expect((await shownIds(page)).sort()).toEqual(['item-fog', 'item-short']);
      expect(await page.locator('#shown-count').textContent()).toBe('2');
      await filter.selectOption('passed');
      expect(await shownIds(page)).toEqual(['item-beach']);
      // With the state filter: both apply.
      await filter.selectOption('failed');
      await page.locator('select[data-filter="data-state"]').selectOption('done');
      expect(await shownIds(page)).toEqual([]);
      await page.locator('select[data-filter="data-state"]').selectOption('');

      // The take opened larger says it too.
      await page.locator('#item-fog .open').click();
      expect(await page.locator('#viewer-body .take-check').textContent()).toBe(
        'check failed (score 0.25): subject: no subject in the fog',
      );
    } finally {
      rmSync(p.dir, { recursive: true, force: true });
    }
  }, 90_000);
});
