import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipBrowserTests } from '../../support/browser.js';
import { type CliResult, runCli, tempProject } from '../../support/cli.js';
import {
  type S3TestServer,
  s3CanRestart,
  s3TestClient,
  skipS3Tests,
  startS3Server,
} from '../../support/s3-server.js';

/**
 * Review from the bucket (docs/gallery.md): the demo batch saved to a real S3 server (Swift's
 * s3api on loopback) with `run --sandbox`, then `report --html` into the bucket and to a local
 * file, each page opened in chromium the way a reviewer would: the bucket's page through the
 * presigned URL the command prints, the local one from disk. Every video must load and play from
 * the bucket under the page's own CSP, the page must say when its links expire, and no secret nor
 * local path may be in it.
 */

const DEMO = resolve(import.meta.dirname, '../../../manifests/demo.yaml');
const IDS = ['beach-sunrise', 'city-night', 'forest-fog', 'desert-stars', 'ocean-waves', 'mountain-lake'];
const SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000;

let server: S3TestServer;
let client: S3Client;
let browser: Browser;
let bucket: string;
let dir: string;
/** Where `run --sandbox` puts the outputs of `output.dir: s3://BUCKET/demo` (docs/services.md). */
let prefix: string;

const report = (args: string[], env: Record<string, string> = server.env): Promise<CliResult> =>
  runCli(['report', 'demo.yaml', '--sandbox', ...args], { cwd: dir, env, timeoutMs: 60_000 });

async function objectText(key: string): Promise<{ text: string; contentType: string | undefined }> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return { text: await answer.Body!.transformToString('utf8'), contentType: answer.ContentType };
}

/** Opens `url` in a fresh page that records CSP violations and page errors from the first instant. */
async function openPage(url: string): Promise<{ page: Page; events: string[] }> {
  const page = await browser.newPage();
  const events: string[] = [];
  page.on('pageerror', (error) => events.push(`pageerror: ${error.message}`));
  await page.addInitScript(`
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (event) =>
      window.__csp.push(event.violatedDirective + ' ' + event.blockedURI));
  `);
  const answer = await page.goto(url);
  if (url.startsWith('http')) expect(answer?.status(), url).toBe(200);
  return { page, events };
}

/** What the test reads of a <video> in the page (the tests compile without the DOM library). */
interface VideoElement {
  videoWidth: number;
  duration: number;
  error: { code: number } | null;
  muted: boolean;
  play(): Promise<void>;
}

/** Every video has data for its current frame, a size and a length; then each plays, muted. */
async function expectVideosPlay(page: Page): Promise<void> {
  const videos = page.locator('.card[data-state="done"] video');
  expect(await videos.count()).toBe(IDS.length);
  // readyState 2 is HAVE_CURRENT_DATA: a frame was fetched (by range requests) and decoded.
  await everyVideo(page, (video) => video.readyState >= 2);
  const facts = await videos.evaluateAll((elements) =>
    (elements as unknown as VideoElement[]).map((video) => ({
      width: video.videoWidth,
      duration: video.duration,
      error: video.error?.code ?? null,
    })),
  );
  for (const fact of facts) {
    expect(fact.error).toBeNull();
    expect(fact.width).toBeGreaterThan(0);
    expect(fact.duration).toBeGreaterThan(0);
  }
  await videos.evaluateAll((elements) =>
    Promise.all(
      (elements as unknown as VideoElement[]).map((video) => {
        video.muted = true;
        return video.play();
      }),
    ),
  );
  await everyVideo(page, (video) => video.currentTime > 0);
}

/**
 * Waits until `holds` is true of every video. Polled from the test through evaluateAll, which
 * reaches the page without eval: waitForFunction polls a string predicate through eval, which the
 * page's own CSP (no 'unsafe-eval') refuses at random moments.
 */
async function everyVideo(
  page: Page,
  holds: (video: { readyState: number; currentTime: number }) => boolean,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  const source = holds.toString();
  for (;;) {
    const states = await page.locator('video').evaluateAll((elements) =>
      elements.map((element) => {
        const video = element as unknown as { readyState: number; currentTime: number };
        return { readyState: video.readyState, currentTime: video.currentTime };
      }),
    );
    if (states.length > 0 && states.every(holds)) return;
    if (Date.now() > deadline) throw new Error(`videos never satisfied ${source}: ${JSON.stringify(states)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What the page shows of its links: the expiry text and time, and every video's URL. */
async function linkFacts(page: Page) {
  const notice = page.locator('#links-expire');
  return {
    visible: await notice.isVisible(),
    text: await notice.innerText(),
    expireAt: await notice.locator('time').getAttribute('datetime'),
    sources: await page
      .locator('video')
      .evaluateAll((videos) => videos.map((video) => video.getAttribute('src') ?? '')),
  };
}

/**
 * No path of this machine in a page that travels (docs/gallery.md): not the project's folder, nor
 * the temp folder it is in; the ledger is named by its file name alone.
 */
async function expectNoLocalPath(page: Page): Promise<void> {
  const html = await page.content();
  for (const local of [dir, tmpdir()]) expect(html).not.toContain(local);
  expect(await page.locator('.generated').innerText()).toMatch(/ Ledger: [^/\\\s]+\.sqlite; service: /);
}

/** No secret of the environment anywhere in the page, its text or its markup. */
async function expectNoSecret(page: Page): Promise<void> {
  const html = await page.content();
  const text = await page.locator('body').innerText();
  for (const secret of [server.secretAccessKey, 'testing']) {
    expect(html).not.toContain(secret);
    expect(text).not.toContain(secret);
  }
}

describe.skipIf(skipS3Tests || skipBrowserTests)('review from the bucket, in chromium', () => {
  beforeAll(async () => {
    server = await startS3Server();
    client = s3TestClient(server);
    bucket = await server.createBucket('gallery');
    prefix = 'sandbox/demo';
    const yaml = readFileSync(DEMO, 'utf8').replace('dir: ../out/demo', `dir: s3://${bucket}/demo`);
    expect(yaml).toContain(`dir: s3://${bucket}/demo`);
    dir = tempProject({ 'demo.yaml': yaml });
    const run = await runCli(['run', 'demo.yaml', '--sandbox'], {
      cwd: dir,
      env: server.env,
      timeoutMs: 120_000,
    });
    expect(run.code, run.stderr).toBe(0);
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    client?.destroy();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('status and export show every saved file as its s3:// URI', async () => {
    const status = await runCli(['status', 'demo.yaml', '--sandbox', '--json'], { cwd: dir });
    expect(status.code, status.stderr).toBe(0);
    const files = (JSON.parse(status.stdout) as { items: Array<{ id: string; files: string[] }> }).items;
    expect(files.map((item) => item.files)).toEqual(IDS.map((id) => [`s3://${bucket}/${prefix}/${id}.mp4`]));
    const exported = await runCli(['export', 'demo.yaml', '--sandbox'], { cwd: dir });
    expect(exported.code, exported.stderr).toBe(0);
    const paths = exported.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { files: Array<{ path: string }> }).files[0]!.path);
    expect(paths).toEqual(IDS.map((id) => `s3://${bucket}/${prefix}/${id}.mp4`));
  });

  it('writes index.html into the bucket and prints its presigned URL; every video plays from the bucket', async () => {
    const before = Date.now();
    const result = await report(['--html']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(`wrote the gallery of demo (6 items) to s3://${bucket}/${prefix}/index.html`);
    const expireAt = /^its links expire at (\S+); open the page at:$/.exec(lines[1]!)?.[1];
    expect(expireAt).toBeDefined();
    const expires = Date.parse(expireAt!);
    expect(expires).toBeGreaterThanOrEqual(before + SEVEN_DAYS_MS - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + SEVEN_DAYS_MS);
    const pageUrl = lines[2]!;
    expect(pageUrl.startsWith(`${server.endpoint}/${bucket}/${prefix}/index.html?`)).toBe(true);
    expect(new URL(pageUrl).searchParams.get('X-Amz-Expires')).toBe('604800');
    expect(lines.slice(3)).toEqual(['']);
    for (const output of [result.stdout, result.stderr]) expect(output).not.toContain(server.secretAccessKey);

    const stored = await objectText(`${prefix}/index.html`);
    expect(stored.contentType).toBe('text/html; charset=utf-8');
    expect(stored.text).toContain('<meta name="generator" content="mediabatch gallery">');

    const { page, events } = await openPage(pageUrl);
    await expectVideosPlay(page);
    const links = await linkFacts(page);
    expect(links.visible).toBe(true);
    expect(links.expireAt).toBe(expireAt);
    expect(links.text).toBe(
      `The video links on this page are presigned and expire at ${expireAt}. For fresh links, run mediabatch report demo.yaml --sandbox --html again.`,
    );
    for (const source of links.sources) {
      const url = new URL(source);
      expect(url.origin).toBe(new URL(server.endpoint).origin);
      expect(url.searchParams.get('X-Amz-Expires')).toBe('604800');
      expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(links.sources.map((source) => new URL(source).pathname)).toEqual(
      expect.arrayContaining(IDS.map((id) => `/${bucket}/${prefix}/${id}.mp4`)),
    );
    await expectNoSecret(page);
    await expectNoLocalPath(page);
    expect(await page.evaluate('window.__csp')).toEqual([]);
    expect(events).toEqual([]);
    await page.close();
  }, 90_000);

  it('writes a local page whose presigned links play from disk, with the lifetime asked for', async () => {
    const before = Date.now();
    const result = await report(['--html', 'review.html', '--url-lifetime', '2h']);
    expect(result.code, result.stderr).toBe(0);
    const htmlPath = join(dir, 'review.html');
    const match = /^wrote the gallery of demo \(6 items\) to (.+); its video links expire at (\S+)\n$/.exec(
      result.stdout,
    );
    expect(match?.[1]).toBe(htmlPath);
    const expires = Date.parse(match![2]!);
    expect(expires).toBeGreaterThanOrEqual(before + 2 * 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 2 * 3600_000);

    const { page, events } = await openPage(pathToFileURL(htmlPath).href);
    await expectVideosPlay(page);
    const links = await linkFacts(page);
    expect(links.visible).toBe(true);
    expect(links.expireAt).toBe(match![2]);
    expect(links.text).toContain(
      'run mediabatch report demo.yaml --sandbox --url-lifetime 2h --html review.html again',
    );
    for (const source of links.sources)
      expect(new URL(source).searchParams.get('X-Amz-Expires')).toBe('7200');
    await expectNoSecret(page);
    await expectNoLocalPath(page);
    expect(await page.evaluate('window.__csp')).toEqual([]);
    expect(events).toEqual([]);
    await page.close();
  }, 90_000);

  it('replaces its own page, and another object only with --force; never an output, a sidecar or the marker', async () => {
    const notes = `${prefix}/notes.html`;
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: notes, Body: '<p>my notes</p>' }));
    const refused = await report(['--html', `s3://${bucket}/${notes}`]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `s3://${bucket}/${notes} exists and is not a gallery page mediabatch wrote; nothing was written.`,
    );
    expect((await objectText(notes)).text).toBe('<p>my notes</p>');

    const forced = await report(['--html', `s3://${bucket}/${notes}`, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await objectText(notes)).text).toContain('<meta name="generator" content="mediabatch gallery">');
    const again = await report(['--html', `s3://${bucket}/${notes}`]);
    expect(again.code, again.stderr).toBe(0);

    const marker = await report(['--html', `s3://${bucket}/${prefix}/.mediabatch-owner.json`, '--force']);
    expect(marker.code).toBe(2);
    const sidecar = await report(['--html', `s3://${bucket}/${prefix}/beach-sunrise.json`, '--force']);
    expect(sidecar.code).toBe(2);
    for (const key of [`${prefix}/.mediabatch-owner.json`, `${prefix}/beach-sunrise.json`])
      expect((await objectText(key)).text).not.toContain('mediabatch gallery');
  }, 90_000);

  it('refuses a page outside the location and a lifetime past 7 days, writing nothing', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['--html', `s3://${bucket}/demo/index.html`],
        `is outside the output location s3://${bucket}/${prefix}`,
      ],
      [['--html', 's3://another-bucket/sandbox/demo/index.html'], 'is outside the output location'],
      [
        ['--html', '--url-lifetime', '8d'],
        "--url-lifetime may be at most 7d (168h, 10080m), the longest a presigned S3 URL can live; got '8d'",
      ],
      [
        ['--html', '--url-lifetime', '30s'],
        "--url-lifetime must be a duration such as 90m, 6h or 2d, got '30s'",
      ],
      [['--url-lifetime', '1h'], '--url-lifetime goes with --html'],
    ];
    for (const [args, message] of cases) {
      const result = await report(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe('');
    }
    await expect(
      client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'demo/index.html' })),
    ).rejects.toThrow();
  });

  it.skipIf(!s3CanRestart)(
    'says so (exit 1) when the storage does not answer, and writes nothing',
    async () => {
      await server.stopProxy();
      try {
        const result = await report(['--html', `s3://${bucket}/${prefix}/down.html`]);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`cannot read s3://${bucket}/${prefix}/down.html`);
      } finally {
        await server.startProxy();
      }
      await expect(
        client.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}/down.html` })),
      ).rejects.toThrow();
    },
    90_000,
  );
});
