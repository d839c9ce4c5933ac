import { describe, expect, it } from 'vitest';
import { buildGallery, type GalleryOptions, nameOnly } from '../../src/documents/gallery/model.js';
import { renderGallery } from '../../src/documents/gallery/page.js';
import { buildStatusReport } from '../../src/documents/status-report.js';
import type { FileRecord } from '../../src/ledger/records.js';
import { attempt, item, manifest, record } from './records.js';

/**
 * A page with presigned links travels: it sits in a bucket, or is a file made to be sent on. It
 * names no path of the machine that wrote it: not the ledger's, not the manifest's, not a local
 * file's. A page of local files, which stays beside them, names the ledger by its path.
 */

const beach = item('beach', { seconds: 4 });
const old = item('old', { seconds: 4 });
const batch = { ...manifest([beach, old]), file: '/home/alice/campaigns/batch.yaml' };
const attempts = [
  attempt({ itemId: 'beach', filesSaved: true }),
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
  items: [record(beach, 'done'), record(old, 'done')],
  attempts,
  files: [
    file(attempts[0]!.id, 's3://media/unit/beach.mp4'),
    // Recorded before the output location moved to a bucket: a local file, with no URL.
    file(attempts[1]!.id, '/home/alice/campaigns/out/unit/old.mp4'),
  ],
};
const SIGNED = 'https://s3.example.test/media/unit/beach.mp4?X-Amz-Signature=abc';
const links = {
  expireAt: '2030-01-08T00:00:00.000Z',
  refreshArgs: ['report', '/home/alice/campaigns/batch.yaml', '--ledger', '/home/alice/l.sqlite', '--html'],
};

function gallery(options: Partial<GalleryOptions>) {
  const model = buildGallery(batch, view, buildStatusReport(batch, view, 0), {
    href: (path) => (path.startsWith('s3://') ? SIGNED : `file://${path}`),
    manifestArg: '../../home/alice/campaigns/batch.yaml',
    generatedAt: '2030-01-01T00:00:00.000Z',
    ledger: { path: '/home/alice/campaigns/.mediabatch/unit.sqlite', exists: true, service: 'the sandbox' },
    ...options,
  });
  const hrefs = Object.fromEntries(model.cards.map((card) => [card.id, card.takes[0]!.videos[0]!.href]));
  return { model, hrefs, html: renderGallery(model, []) };
}

describe('the paths a gallery page names', () => {
  it('a page of local files names the ledger by its path and links the files', () => {
    const { model, hrefs, html } = gallery({});
    expect(model.ledgerLine).toBe(
      'Ledger: /home/alice/campaigns/.mediabatch/unit.sqlite; service: the sandbox',
    );
    expect(html).toContain(model.ledgerLine);
    expect(hrefs).toEqual({ beach: SIGNED, old: 'file:///home/alice/campaigns/out/unit/old.mp4' });
  });

  it('a page with presigned links names the ledger, the manifest and a local file by their names only', () => {
    const { model, hrefs, html } = gallery({ links });
    expect(html).not.toContain('/home/');
    expect(html).not.toContain('alice');
    expect(model.ledgerLine).toBe('Ledger: unit.sqlite; service: the sandbox');
    expect(html).toContain('data-base="mediabatch run batch.yaml"');
    expect(html).toContain('run <code>mediabatch report batch.yaml --ledger l.sqlite --html</code> again');
    expect(hrefs).toEqual({ beach: SIGNED, old: null });
  });

  it('before the first run, a page with presigned links names the ledger to be by its name', () => {
    const { model } = gallery({
      links,
      ledger: { path: '/home/alice/.mediabatch/unit.sqlite', exists: false, service: null },
    });
    expect(model.ledgerLine).toBe('No ledger yet at unit.sqlite: nothing has run.');
  });

  it('a path is cut to its name when it would place a file on this machine', () => {
    expect(nameOnly('/home/alice/l.sqlite')).toBe('l.sqlite');
    expect(nameOnly('C:\\Users\\alice\\l.sqlite')).toBe('l.sqlite');
    expect(nameOnly('file:///home/alice/a.mp4')).toBe('a.mp4');
    expect(nameOnly('../alice/batch.yaml')).toBe('batch.yaml');
    expect(nameOnly('batch.yaml')).toBe('batch.yaml');
    expect(nameOnly('campaigns/batch.yaml')).toBe('campaigns/batch.yaml');
    expect(nameOnly('s3://media/unit/index.html')).toBe('s3://media/unit/index.html');
    expect(nameOnly('--html')).toBe('--html');
  });
});
