import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StreamedManifest } from '../../src/batch/resolve/streamed-manifest.js';
import { exportRecords, status, streamStatus } from '../../src/index.js';
import type { Manifest } from '../../src/manifest/index.js';
import { jsonChunks, statusSummaryChunks, statusTextChunks } from '../../src/render.js';
import { aCase, built, streamedOf } from './streamed-cases.js';

/**
 * `status` and `export` of a manifest read a chunk at a time (status-stream.ts, export-items.ts)
 * give what they give of the same manifest held whole: the document, its JSON, its text and its
 * summary byte for byte, and the same records, over ledgers with every kind of history (items the
 * manifest no longer lists, renames, saved takes, files missing, moderation's refusals) and chunks
 * of every size. plan's counterpart is plan/plan-stream.test.ts.
 */

/** The manifest read `size` items at a time. */
const chunked = (manifest: StreamedManifest, size: number): StreamedManifest => ({
  ...manifest,
  readItems: (_size?: number, again?: boolean) => manifest.readItems(size, again),
});

async function all<T>(records: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const record of records) found.push(record);
  return found;
}

/** What the CLI prints of a status: its JSON, its whole listing and its summary. */
async function printed(manifest: Manifest | StreamedManifest, ledger: string) {
  const { ledger: note, ...document } = await streamStatus(manifest, { ledger });
  try {
    const shown = { ...note, service: document.service };
    return {
      json: [...jsonChunks(document)].join(''),
      text: [...statusTextChunks(document, shown)].join(''),
      summary: [...statusSummaryChunks(document, shown)].join(''),
    };
  } finally {
    document.items.close();
  }
}

describe('status and export of a manifest read a chunk at a time', () => {
  // Both forms count the seconds left to an output's expiry from the clock: one clock for both.
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2026-11-29T12:00:00Z'));
  });
  afterAll(() => {
    vi.useRealTimers();
  });

  it('are those of the manifest held whole, whatever the ledger holds and the chunks (property)', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(aCase, fc.integer({ min: 1, max: 4 }), async (c, size) => {
        const { manifest, path } = await built(c);
        const streamed = chunked(streamedOf(manifest.file), size);
        const whole = await status(manifest, { ledger: path });
        expect(await status(streamed, { ledger: path })).toEqual(whole);
        expect(await printed(streamed, path)).toEqual(await printed(manifest, path));
        const records = await all(exportRecords(manifest, { ledger: path }));
        expect(await all(exportRecords(streamed, { ledger: path }))).toEqual(records);
        for (const item of whole.items) seen.add(item.state);
        if (records.some((record) => !record.in_manifest)) seen.add('removed');
        if (whole.items.some((item) => item.file_problems)) seen.add('file problems');
      }),
      { numRuns: 40 },
    );
    // The histories the cases draw were all met, not only the easy ones.
    for (const kind of ['done', 'failed', 'pending', 'in_flight', 'removed', 'file problems'])
      expect(seen, kind).toContain(kind);
  });
});
