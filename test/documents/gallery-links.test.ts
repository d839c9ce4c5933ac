import { describe, expect, it } from 'vitest';
import { buildGallery, type GalleryOptions, pageRelativeHref } from '../../src/documents/gallery/model.js';
import { galleryCsp, linksNotice, renderGallery } from '../../src/documents/gallery/page.js';
import { buildStatusReport } from '../../src/documents/status-report.js';
import type { FileRecord } from '../../src/ledger/records.js';
import { galleryData } from '../support/gallery-data.js';
import { attempt, item, manifest, record } from './records.js';

/** How the gallery links each saved file: the caller's mapping, and what the page says of expiry. */

const beach = item('beach', { seconds: 4 });
const city = item('city', { seconds: 4 });
const batch = { ...manifest([beach, city]), outputDir: 's3://media-bucket/unit' };
const attempts = [
  attempt({ itemId: 'beach', filesSaved: true }),
  attempt({ itemId: 'city', filesSaved: true }),
];
const file = (attemptId: number, path: string): FileRecord => ({
  attemptId,
  idx: 0,
  path,
  bytes: 10,
  sha256: 'a'.repeat(64),
  savedAt: '2030-01-01T00:00:00.000Z',
});
const view = {
  items: [record(beach, 'done'), record(city, 'done')],
  attempts,
  files: [
    file(attempts[0]!.id, 's3://media-bucket/unit/beach.mp4'),
    file(attempts[1]!.id, 's3://media-bucket/unit/city.mp4'),
  ],
};
const SIGNED =
  'https://s3.example.test:9000/media-bucket/unit/beach.mp4?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc';

function page(options: Partial<GalleryOptions>): { html: string; videos: string[] } {
  const model = buildGallery(batch, view, buildStatusReport(batch, view, 0), {
    href: (path) => `local:${path}`,
    manifestArg: 'batch.yaml',
    generatedAt: '2030-01-01T00:00:00.000Z',
    ledger: { path: '/work/ledger.sqlite', exists: true, service: 'the sandbox' },
    ...options,
  });
  const videos = model.cards.flatMap((card) =>
    card.takes.flatMap((take) => take.videos.map((video) => video.href)),
  );
  return { html: renderGallery(model, []), videos: videos.map((href) => href ?? '(none)') };
}

describe('the hrefs of the gallery', () => {
  it('are whatever the caller maps each saved path to', () => {
    const { videos } = page({ href: (path) => (path.endsWith('beach.mp4') ? SIGNED : `other:${path}`) });
    expect(videos).toEqual([SIGNED, 'other:s3://media-bucket/unit/city.mp4']);
  });

  it('keep a presigned query intact in the page data, which names the file by its name', () => {
    const { html } = page({ href: () => SIGNED });
    const files = galleryData(html).tiles.flatMap((tile) => tile.takes.flatMap((take) => take.files));
    expect(files).toEqual([
      { href: SIGNED, label: 'beach.mp4', video: true },
      { href: SIGNED, label: 'city.mp4', video: true },
    ]);
    // & is written as \u0026 in the data block, so no text there reads as markup.
    expect(html).not.toContain(SIGNED);
  });

  it('are relative to the page for local files, and survive odd names', () => {
    const href = pageRelativeHref('/work/batch.yaml', '/work/out/unit/index.html');
    expect(href('/work/out/unit/beach.mp4')).toBe('beach.mp4');
    expect(href('/work/out/unit/sub/a b#1.mp4')).toBe('sub/a%20b%231.mp4');
    expect(href('/work/other/c.mp4')).toBe('../../other/c.mp4');
  });
});

describe("the page's policy for media", () => {
  it('allows only the page and file: when every link is relative', () => {
    expect(galleryCsp()).toMatch(/^default-src 'none'; media-src 'self' file:; style-src/);
    expect(page({}).html).toContain('media-src &#39;self&#39; file:; style-src');
  });

  it('adds the storage origin of presigned links, and nothing of their path or query', () => {
    const { html } = page({
      href: (path) => (path.endsWith('beach.mp4') ? SIGNED : 'http://127.0.0.1:8080/b/k?x=1'),
    });
    expect(html).toContain(
      'media-src &#39;self&#39; file: http://127.0.0.1:8080 https://s3.example.test:9000; style-src',
    );
  });
});

describe('when the links expire', () => {
  const links = {
    expireAt: '2030-01-08T00:00:00.000Z',
    refreshArgs: ['report', 'my batch.yaml', '--sandbox', '--html', 's3://media-bucket/unit/index.html'],
  };

  it('says nothing for a page of local files', () => {
    expect(page({}).html).not.toContain('links-expire');
    expect(page({}).html).not.toContain('presigned');
  });

  it('says so near the top, as an ISO time, with the command that makes fresh links', () => {
    expect(linksNotice(links)).toBe(
      '<p class="expiry" id="links-expire">The video links on this page are presigned and expire at ' +
        '<time datetime="2030-01-08T00:00:00.000Z">2030-01-08T00:00:00.000Z</time>. For fresh links, run ' +
        '<code>mediabatch report &#39;my batch.yaml&#39; --sandbox --html s3://media-bucket/unit/index.html</code> again.</p>',
    );
    const { html } = page({ links });
    expect(html.indexOf('id="links-expire"')).toBeGreaterThan(html.indexOf('<h1>'));
    expect(html.indexOf('id="links-expire"')).toBeLessThan(html.indexOf('id="totals"'));
  });
});
