import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { launchChromium, skipBrowserTests } from '../../support/browser.js';
import { manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';
import { pollPage } from '../../support/page-poll.js';

const YAML = `${manifestYaml('shapes')}items:
  - {id: tall, prompt: A lighthouse, input: {orientation: "9:16"}}
  - {id: square, prompt: A kettle, input: {orientation: "1:1"}}
  - {id: wide, prompt: A beach, input: {orientation: "16:9"}}
`;

interface Shown {
  id: string;
  natural: number;
  shown: number;
  fit: string;
  inside: boolean;
}

/**
 * Issue 41, item 7: tiles were 16:9 with `object-fit: cover`, so a 9:16 or 1:1 take lost most of
 * its picture. Run by the real CLI against the sandbox (clips of the orientation asked for), the
 * page the run left opened in chromium: each video is drawn at its own shape, inside its tile.
 */
describe.skipIf(skipBrowserTests)('the gallery shows the whole frame, in chromium', () => {
  let sandbox: SandboxHandle | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it('draws a 9:16, a 1:1 and a 16:9 take each at its own aspect ratio, uncropped', async () => {
    sandbox = await startTestSandbox();
    const p = project('shapes', YAML);
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(0);
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    try {
      await page.goto(pathToFileURL(join(p.outDir, 'index.html')).href);
      await page.locator('#cards[data-ready="true"]').waitFor({ state: 'attached' });
      const shown = await pollPage(
        page,
        (current) =>
          current.locator('.card').evaluateAll((cards) =>
            cards.map((card): Shown => {
              const styleOf = (
                globalThis as unknown as { getComputedStyle(e: unknown): { objectFit: string } }
              ).getComputedStyle;
              const video = card.querySelector('video')!;
              const thumb = card.querySelector('.thumb')!.getBoundingClientRect();
              const box = video?.getBoundingClientRect();
              return {
                id: card.id,
                natural: video && video.videoHeight > 0 ? video.videoWidth / video.videoHeight : 0,
                shown: box && box.height > 0 ? box.width / box.height : 0,
                fit: video ? styleOf(video).objectFit : '',
                inside:
                  !!box &&
                  box.left >= thumb.left - 0.5 &&
                  box.right <= thumb.right + 0.5 &&
                  box.top >= thumb.top - 0.5 &&
                  box.bottom <= thumb.bottom + 0.5,
              };
            }),
          ),
        (list) => list.length === 3 && list.every((entry) => entry.natural > 0),
      );
      const byId = Object.fromEntries(shown.map((entry) => [entry.id, entry]));
      // The sandbox made each clip in the orientation asked for.
      expect(byId['item-tall']!.natural).toBeCloseTo(9 / 16, 2);
      expect(byId['item-square']!.natural).toBeCloseTo(1, 2);
      expect(byId['item-wide']!.natural).toBeCloseTo(16 / 9, 2);
      for (const entry of shown) {
        // Drawn at its own shape (within a pixel's rounding), inside its tile, never cropped.
        expect(entry.shown, entry.id).toBeCloseTo(entry.natural, 1);
        expect(entry.inside, entry.id).toBe(true);
        expect(entry.fit, entry.id).not.toBe('cover');
      }
    } finally {
      rmSync(p.dir, { recursive: true, force: true });
    }
  }, 90_000);
});
