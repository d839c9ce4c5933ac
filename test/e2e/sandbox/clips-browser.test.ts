import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobColour, type Ycbcr } from '../../../src/sandbox/clip-look.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { MediaGenClient } from '../../../src/service-client/index.js';
import { launchChromium, skipBrowserTests } from '../../support/browser.js';
import { startClockedSandbox } from '../../support/e2e.js';

/**
 * The sandbox's clips as a person sees them: made by a sandbox for real requests, downloaded from
 * its signed URLs, then decoded and drawn by Debian's chromium.
 */

type Rgb = [number, number, number];

interface Case {
  name: string;
  input: Record<string, unknown>;
  width: number;
  height: number;
  seconds: number;
  /** A pixel inside the tile at 1 s (frame 2, the tile's third place). */
  tileAtOneSecond: [number, number];
}

const CASES: Case[] = [
  {
    name: 'landscape',
    input: { orientation: '16:9', seconds: 4, definition: '480p' },
    width: 854,
    height: 480,
    seconds: 4,
    // The tile visits a 4x4 grid spread over the 53x30 macroblocks: its third place is column 35.
    tileAtOneSecond: [35 * 16 + 2, 2],
  },
  {
    name: 'portrait',
    input: { orientation: '9:16', seconds: 8, definition: '480p' },
    width: 480,
    height: 854,
    seconds: 8,
    tileAtOneSecond: [19 * 16 + 2, 2],
  },
  // No seconds and no definition: the sandbox's default length, 5 s, and definition, 720p.
  {
    name: 'square',
    input: { orientation: '1:1' },
    width: 720,
    height: 720,
    seconds: 5,
    tileAtOneSecond: [29 * 16 + 2, 2],
  },
];

/** What the page reports of one clip. */
interface Seen {
  readyState: number;
  width: number;
  height: number;
  duration: number;
  /** At 0 s: the background (lower right) and the tile (upper left corner); at 1 s the same two. */
  background: Rgb;
  tileAtStart: Rgb;
  tileCornerLater: Rgb;
  tileLater: Rgb;
}

/** The page's side, typed by hand: these tests compile without the DOM library. */
interface PageVideo {
  muted: boolean;
  preload: string;
  src: string;
  readyState: number;
  videoWidth: number;
  videoHeight: number;
  duration: number;
  currentTime: number;
  addEventListener(type: string, listener: () => void, options: { once: boolean }): void;
  requestVideoFrameCallback(callback: () => void): number;
}
interface PageCanvas {
  width: number;
  height: number;
  getContext(kind: '2d'): {
    drawImage(video: PageVideo, x: number, y: number): void;
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  };
}
interface PageDocument {
  createElement(tag: 'video'): PageVideo;
  createElement(tag: 'canvas'): PageCanvas;
  body: { append(node: unknown): void };
}

/** A clip played from a blob: URL, so the page's own origin owns it and the canvas is readable. */
async function seeClip(page: Page, bytes: Buffer, tileLater: [number, number]): Promise<Seen> {
  return page.evaluate(
    async ({ base64, tileLater }) => {
      const document = (globalThis as unknown as { document: PageDocument }).document;
      const video = document.createElement('video');
      video.muted = true;
      video.preload = 'auto';
      const event = (type: string) =>
        new Promise<void>((resolve, reject) => {
          video.addEventListener(type, resolve, { once: true });
          video.addEventListener('error', () => reject(new Error(`video error before ${type}`)), {
            once: true,
          });
        });
      const ready = event('canplaythrough');
      const binary = atob(base64);
      const data = Uint8Array.from(binary, (char) => char.charCodeAt(0));
      video.src = URL.createObjectURL(new Blob([data], { type: 'video/mp4' }));
      document.body.append(video);
      await ready;
      const canvas = document.createElement('canvas');
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      const context = canvas.getContext('2d');
      const pixel = (x: number, y: number) => {
        context.drawImage(video, 0, 0);
        return [...context.getImageData(x, y, 1, 1).data.subarray(0, 3)] as Rgb;
      };
      const lowerRight = [Math.floor(video.videoWidth * 0.75), Math.floor(video.videoHeight * 0.75)] as const;
      // Each read waits for its frame to be presented: 'seeked' alone can come before the decoder
      // hands the frame over on a busy machine, and a canvas drawn then is black. The first frame
      // is sought too (to 0), so it waits the same way (bounded, should the callback not come).
      const showFrameAt = async (seconds: number) => {
        const seeked = event('seeked');
        const presented = new Promise<void>((resolve) => {
          video.requestVideoFrameCallback(() => resolve());
          setTimeout(resolve, 3000);
        });
        video.currentTime = seconds;
        await seeked;
        await presented;
      };
      await showFrameAt(0);
      const background = pixel(...lowerRight);
      const tileAtStart = pixel(2, 2);
      await showFrameAt(1);
      return {
        readyState: video.readyState,
        width: video.videoWidth,
        height: video.videoHeight,
        duration: video.duration,
        background,
        tileAtStart,
        tileCornerLater: pixel(2, 2),
        tileLater: pixel(tileLater[0], tileLater[1]),
      };
    },
    { base64: bytes.toString('base64'), tileLater },
  );
}

/** The RGB a BT.601 decoder makes of a limited-range colour. */
function rgbOf({ y, cb, cr }: Ycbcr): Rgb {
  const luma = 1.164 * (y - 16);
  return [
    luma + 1.596 * (cr - 128),
    luma - 0.392 * (cb - 128) - 0.813 * (cr - 128),
    luma + 2.017 * (cb - 128),
  ];
}

const distance = (a: Rgb, b: Rgb) => Math.max(...a.map((value, index) => Math.abs(value - (b[index] ?? 0))));
const WHITE: Rgb = [255, 255, 255];

describe.skipIf(skipBrowserTests)('sandbox clips in chromium', () => {
  let sandbox: SandboxHandle;
  let browser: Browser;
  let page: Page;
  const seen = new Map<string, { jobId: string; clip: Seen }>();

  beforeAll(async () => {
    const clocked = await startClockedSandbox();
    sandbox = clocked.sandbox;
    const client = new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey });
    browser = await launchChromium();
    page = await browser.newPage();
    let key = 0;
    const makeClip = async (input: Record<string, unknown>) => {
      const created = await client.createVideoJob(
        JSON.stringify({ input: { prompt: `clip ${++key}`, ...input } }),
        `clips-${key}`,
      );
      clocked.advance(5);
      const url = (await client.getJob(created.data.id)).data.output.files[0]?.url;
      if (!url) throw new Error(`no output for job ${created.data.id}`);
      return { jobId: created.data.id, bytes: Buffer.from(await (await request(url)).body.arrayBuffer()) };
    };
    for (const item of CASES) {
      const { jobId, bytes } = await makeClip(item.input);
      seen.set(item.name, { jobId, clip: await seeClip(page, bytes, item.tileAtOneSecond) });
    }
    // Job ids are random and hues come from them, so two jobs may now and then look alike: take
    // the first landscape job the sandbox means to colour unlike the first one (a few tries at most).
    const first = seen.get('landscape')!;
    for (let tries = 0; !seen.has('another'); tries += 1) {
      if (tries === 50) throw new Error('50 jobs all coloured like the first');
      const { jobId, bytes } = await makeClip({ orientation: '16:9', seconds: 1 });
      if (distance(rgbOf(jobColour(jobId)), rgbOf(jobColour(first.jobId))) <= 40) continue;
      seen.set('another', { jobId, clip: await seeClip(page, bytes, [2, 2]) });
    }
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  it.each(CASES)('plays the $name clip to readyState 4, $width x $height, $seconds s long', (item) => {
    const { clip } = seen.get(item.name)!;
    expect(clip.readyState).toBe(4);
    expect([clip.width, clip.height]).toEqual([item.width, item.height]);
    expect(Math.abs(clip.duration - item.seconds)).toBeLessThan(0.1);
  });

  it.each(CASES)('draws the $name clip in its job colour, the tile moving on by 1 s', (item) => {
    const { jobId, clip } = seen.get(item.name)!;
    expect(distance(clip.background, rgbOf(jobColour(jobId)))).toBeLessThan(8);
    expect(distance(clip.tileAtStart, WHITE)).toBeLessThan(8);
    // The tile left its first place (wiped back to the background) and is white where it went.
    expect(distance(clip.tileCornerLater, clip.background)).toBeLessThan(8);
    expect(distance(clip.tileLater, WHITE)).toBeLessThan(8);
  });

  it("draws two jobs' first frames in different colours", () => {
    const [a, b] = [seen.get('landscape')!, seen.get('another')!];
    expect(a.jobId).not.toBe(b.jobId);
    expect(distance(a.clip.background, b.clip.background)).toBeGreaterThan(30);
  });
});
