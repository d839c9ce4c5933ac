import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { writeBigGallery } from '../support/big-gallery.js';
import { launchChromium } from '../support/browser.js';
import { series } from './bench-rows.js';
import { removeDir } from './fixtures.js';
import type { Row } from './stats.js';

/**
 * Scenario 12: the gallery page of 10,000 items in Debian's chromium (headless, driven by
 * playwright-core), opened from disk as a person would. Each run is a fresh browser context, so
 * nothing is cached from the last. The reference, in the same run: a blank page from the same
 * folder (what opening any file costs), timed the same way.
 *
 * - open: from the navigation to the page answering a person, i.e. the first tile visible and a
 *   state filter chosen and applied (the shown count says so);
 * - filter: one filter change, from the change event to the next frame painted, once everything
 *   is rendered; and back to all;
 * - scroll: a jump to the middle of the grid, to the next frame, and how many <video> elements
 *   hold a source there (the lazy loading's promise: a few screens' worth, not thousands);
 * - memory: the renderer's JS heap and DOM node count (Chrome DevTools Protocol), settled.
 */
export const GALLERY_ITEMS = 10_000;

export interface GallerySample {
  blankMs: number;
  openMs: number;
  firstTileMs: number;
  filterMs: number;
  unfilterMs: number;
  scrollMs: number;
  videosWithSource: number;
  jsHeapMb: number;
  domNodes: number;
}

type Act = { filter: string } | { scroll: 'middle' };

/**
 * The time from a change (a state filter chosen, or a jump to the grid's middle) to the frames after it,
 * in the page's own clock. Passed as a function, which CDP calls without eval: the page's CSP
 * forbids eval, as it should.
 */
function frameAfter(page: Page, act: Act): Promise<number> {
  return page.evaluate((what) => {
    // The bench compiles without the DOM library: the little of the page it touches, typed here.
    const web = globalThis as unknown as {
      document: { querySelector(selector: string): { value: string; dispatchEvent(event: unknown): void } };
      Event: new (type: string) => unknown;
      scrollTo(x: number, y: number): void;
      requestAnimationFrame(callback: () => void): void;
    };
    const started = performance.now();
    if ('filter' in what) {
      const select = web.document.querySelector('select[data-filter="data-state"]');
      select.value = what.filter;
      select.dispatchEvent(new web.Event('change'));
    } else {
      const body = web.document.querySelector('body') as unknown as { scrollHeight: number };
      web.scrollTo(0, body.scrollHeight / 2);
    }
    // Two frames: the scroll event's own, in which the page asks for a frame to draw the tiles in.
    // (No named function in here: tsx names them through a helper the page does not have.)
    return new Promise<number>((resolve) =>
      web.requestAnimationFrame(() =>
        web.requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - started), 0)),
      ),
    );
  }, act);
}

async function metrics(page: Page): Promise<{ jsHeapMb: number; domNodes: number }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const { metrics: list } = await cdp.send('Performance.getMetrics');
  const value = (name: string) => list.find((metric) => metric.name === name)?.value ?? 0;
  return { jsHeapMb: value('JSHeapUsedSize') / 1024 / 1024, domNodes: value('Nodes') };
}

async function blankMs(browser: Browser, url: string): Promise<number> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const started = performance.now();
  await page.goto(url);
  const ms = performance.now() - started;
  await context.close();
  return ms;
}

async function galleryRun(
  browser: Browser,
  url: string,
  failed: number,
): Promise<Omit<GallerySample, 'blankMs'>> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const state = page.locator('select[data-filter="data-state"]');
  const shown = page.locator('#shown-count');
  const started = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.locator('.card').first().waitFor({ state: 'visible', timeout: 120_000 });
  const firstTileMs = performance.now() - started;
  await state.selectOption('failed', { timeout: 120_000 });
  await page.waitForSelector(`#shown-count:text-is("${failed}")`, { timeout: 120_000 });
  const openMs = performance.now() - started;
  await state.selectOption('');
  await page.waitForSelector('#cards[data-ready="true"]', { timeout: 120_000 });
  await page.waitForLoadState('load');
  const filterMs = await frameAfter(page, { filter: 'failed' });
  if ((await shown.textContent()) !== String(failed)) throw new Error('the state filter did not apply');
  const unfilterMs = await frameAfter(page, { filter: '' });
  const scrollMs = await frameAfter(page, { scroll: 'middle' });
  await page.waitForTimeout(1500); // the tiles near the new place attach their videos
  const videosWithSource = await page.locator('video[src]').count();
  const memory = await metrics(page);
  await context.close();
  return { openMs, firstTileMs, filterMs, unfilterMs, scrollMs, videosWithSource, ...memory };
}

const GALLERY = '12 gallery 10k';

export function galleryRows(samples: readonly GallerySample[]): Row[] {
  const of = (pick: (sample: GallerySample) => number) => samples.map(pick);
  return [
    series(
      GALLERY,
      'reference: a blank page from the same folder, navigation to load',
      'ms',
      0,
      of((x) => x.blankMs),
    ),
    series(
      GALLERY,
      'first tile visible, from navigation',
      'ms',
      0,
      of((x) => x.firstTileMs),
    ),
    {
      ...series(
        GALLERY,
        'open: navigation to a state filter applied',
        'ms',
        0,
        of((x) => x.openMs),
      ),
      target: { op: '<', value: 3000 },
    },
    series(
      GALLERY,
      'filter change to the frame after it',
      'ms',
      1,
      of((x) => x.filterMs),
    ),
    series(
      GALLERY,
      'filter cleared (all 10,000) to the frame after it',
      'ms',
      1,
      of((x) => x.unfilterMs),
    ),
    series(
      GALLERY,
      'jump to the middle to the frames after it',
      'ms',
      1,
      of((x) => x.scrollMs),
    ),
    series(
      GALLERY,
      '<video> elements with a source there',
      'count',
      0,
      of((x) => x.videosWithSource),
    ),
    series(
      GALLERY,
      'renderer JS heap used',
      'MB',
      1,
      of((x) => x.jsHeapMb),
    ),
    series(
      GALLERY,
      'DOM nodes',
      'count',
      0,
      of((x) => x.domNodes),
    ),
  ];
}

export async function galleryRuns(runs: number, log: (line: string) => void): Promise<GallerySample[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mb-gallery-bench-'));
  const browser = await launchChromium();
  try {
    const big = writeBigGallery(dir, GALLERY_ITEMS);
    writeFileSync(join(dir, 'blank.html'), '<!DOCTYPE html><title>blank</title>');
    const samples: GallerySample[] = [];
    for (let i = 1; i <= runs; i += 1) {
      log(`gallery: run ${i}/${runs}, ${GALLERY_ITEMS} items`);
      const blank = await blankMs(browser, pathToFileURL(join(dir, 'blank.html')).href);
      samples.push({
        blankMs: blank,
        ...(await galleryRun(browser, pathToFileURL(big.htmlPath).href, big.failed)),
      });
    }
    return samples;
  } finally {
    await browser.close();
    removeDir(dir);
  }
}
