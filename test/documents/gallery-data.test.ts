import { describe, expect, it } from 'vitest';
import { buildGallery, type GalleryOptions } from '../../src/documents/gallery/model.js';
import { renderGallery } from '../../src/documents/gallery/page.js';
import { attemptHistory } from '../../src/documents/render-text.js';
import { buildStatusReport } from '../../src/documents/status-report.js';
import type { FileRecord } from '../../src/ledger/records.js';
import { galleryData } from '../support/gallery-data.js';
import { attempt, item, manifest, record } from './records.js';

/**
 * The page's JSON data block: what the script draws the tiles from must stay data (no text can
 * end the block or start markup), and must carry every text as the rest of the page shows it.
 */

const HOSTILE = '</script><script>window.__pwned = 1</script><!-- \u2028 & <img src=x onerror=alert(1)>';
const beach = item('beach', { seconds: 4 });
const hostile = item('hostile', { seconds: 4, prompt: HOSTILE });
const old = item('old', { seconds: 4 });
const batch = { ...manifest([beach, hostile, old]), file: '/home/alice/campaigns/batch.yaml' };
const attempts = [
  attempt({ itemId: 'beach', filesSaved: true }),
  attempt({
    itemId: 'hostile',
    jobStatus: 'failed',
    errorCode: 'content_rejected',
    errorMessage: `no </script> here ${'\u0007'}https://cdn.example/x.mp4?X-Amz-Signature=abc`,
  }),
  attempt({ itemId: 'old', filesSaved: true }),
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
  items: [
    record(beach, 'done'),
    record(hostile, 'failed', { errorCode: 'content_rejected', errorMessage: 'no </script> here' }),
    record(old, 'done'),
  ],
  attempts,
  files: [
    file(attempts[0]!.id, 's3://media/unit/beach.mp4'),
    // Recorded before the output location moved to a bucket: a local file, with no URL.
    file(attempts[2]!.id, '/home/alice/campaigns/out/unit/old.mp4'),
  ],
};
const SIGNED = 'https://s3.example.test/media/unit/beach.mp4?X-Amz-Signature=abc';

function html(options: Partial<GalleryOptions>): string {
  const model = buildGallery(batch, view, buildStatusReport(batch, view, 0), {
    href: (path) => (path.startsWith('s3://') ? SIGNED : `file://${path}`),
    manifestArg: '../../home/alice/campaigns/batch.yaml',
    generatedAt: '2030-01-01T00:00:00.000Z',
    ledger: { path: '/home/alice/campaigns/batch.mediabatch.sqlite', exists: true, service: 'the sandbox' },
    ...options,
  });
  const order = new Map(batch.items.map((entry, index) => [entry.id, index]));
  return renderGallery(model, attemptHistory(view.attempts, order));
}

describe('the data block', () => {
  const page = html({});
  const block = page.slice(page.indexOf('id="gallery-data">'), page.lastIndexOf('<script>'));

  it('holds no character that could end it or start markup', () => {
    expect(block.slice('id="gallery-data">'.length, block.lastIndexOf('</script>'))).not.toMatch(
      /[<>&\u2028]/,
    );
    expect(page.match(/<script/g)).toHaveLength(2);
    expect(page).not.toContain('__pwned = 1</script>');
  });

  it('gives the script the texts, cleaned as the rest of the page', () => {
    const data = galleryData(page);
    const tile = data.tiles.find((entry) => entry.id === 'hostile')!;
    // The line separator is a control character to cleanText: a space, as in every cell.
    expect(tile.prompt).toBe(HOSTILE.replace('\u2028', ' '));
    expect(tile.state).toBe('failed');
    // A control character becomes a space, and a signed URL loses its query.
    const row = data.attempts.find((cells) => cells[0] === 'hostile')!;
    expect(row[9]).toBe('content_rejected: no </script> here  https://cdn.example/x.mp4?…');
    expect(data.tiles.map((entry) => entry.id)).toEqual(['hostile', 'beach', 'old']);
  });
});
