import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildGallery, pageRelativeHref } from '../../src/documents/gallery/model.js';
import { renderGallery } from '../../src/documents/gallery/page.js';
import { attemptHistory } from '../../src/documents/render-text.js';
import { buildStatusReport } from '../../src/documents/status-report.js';
import type { AttemptRecord, FileRecord, ItemRecord } from '../../src/ledger/records.js';
import { preparedAttempt } from '../../src/ledger/records.js';
import type { Manifest, ManifestItem } from '../../src/manifest/index.js';
import { jobVideo } from '../../src/sandbox/mp4.js';

/**
 * A gallery page of `count` items written in-process from plain ledger rows (no run, no SQLite),
 * for the scale test and the gallery bench: a real run of 10,000 items would take minutes and
 * measure the runner, not the page. One item in fifty failed, one in ten redone (two takes), two
 * matrix axes; the videos are real, playable files (the sandbox's clip), VIDEO_FILES of them
 * shared round-robin, so the page's loading is a browser's real work. Each item has a template
 * variable of its own (`harbour`), whose filter is a text field, not a drop-down of 10,000.
 */

const VIDEO_FILES = 60;
const STYLES = ['noir', 'pastel', 'ink', 'neon'];
const SPEEDS = ['slow', 'fast'];
const AT = '2030-01-01T00:00:00.000Z';
const DONE_AT = '2030-01-01T00:00:42.000Z';

export interface BigGallery {
  htmlPath: string;
  items: number;
  failed: number;
  /** Items with style 'noir' (the first value of axis 0). */
  noir: number;
}

function manifestOf(count: number, dir: string): Manifest {
  const items: ManifestItem[] = [];
  for (let i = 0; i < count; i += 1) {
    const style = STYLES[i % STYLES.length]!;
    const speed = SPEEDS[Math.floor(i / STYLES.length) % SPEEDS.length]!;
    items.push({
      id: `shot-${String(i).padStart(5, '0')}.${style}.${speed}`,
      model: null,
      input: { prompt: `Shot ${i}: a ${speed} pan over a ${style} harbour at dusk`, seconds: 4 },
      metadata: {},
      maxCostMicros: null,
      matrix: { style, speed },
      // A variable of its own per item: its filter has as many values as there are items.
      vars: { harbour: `harbour ${i}` },
    });
  }
  return {
    file: join(dir, 'batch.yaml'),
    name: 'big',
    budgetMicros: null,
    concurrency: null,
    retries: 2,
    outputDir: dir,
    items,
    warnings: [],
  };
}

/** Ledger rows: every item done (a file each take) except every fiftieth, which failed. */
function ledgerOf(manifest: Manifest, dir: string) {
  const items: ItemRecord[] = [];
  const attempts: AttemptRecord[] = [];
  const files: FileRecord[] = [];
  let failed = 0;
  manifest.items.forEach((item, index) => {
    const fails = index % 50 === 7;
    failed += fails ? 1 : 0;
    const takes = fails ? 1 : index % 10 === 3 ? 2 : 1;
    for (let take = 1; take <= takes; take += 1) {
      const id = attempts.length + 1;
      attempts.push({
        ...preparedAttempt({
          id,
          itemId: item.id,
          seq: take,
          idempotencyKey: `mb_key_${id}`,
          requestBody: '{}',
          requestHash: 'h',
          reservedMicros: 0,
          createdAt: AT,
          take,
        }),
        state: 'accepted',
        httpStatus: 202,
        jobId: `job_${id}`,
        jobStatus: fails ? 'failed' : 'succeeded',
        amountMicros: fails ? 0 : 200_000,
        errorCode: fails ? 'content_rejected' : null,
        errorMessage: fails ? 'The prompt was rejected by the content filter.' : null,
        filesSaved: !fails,
        completedAt: DONE_AT,
      });
      if (!fails) {
        const name = `clip-${(index + take) % VIDEO_FILES}.mp4`;
        files.push({ attemptId: id, idx: 0, path: join(dir, name), bytes: 1, sha256: '0', savedAt: DONE_AT });
      }
    }
    items.push({
      itemId: item.id,
      requestHash: 'h',
      state: fails ? 'failed' : 'done',
      retriesUsed: 0,
      errorCode: fails ? 'content_rejected' : null,
      errorMessage: fails ? 'The prompt was rejected by the content filter.' : null,
      updatedAt: DONE_AT,
    });
  });
  return { view: { items, attempts, files }, failed };
}

/** Writes `dir/index.html` (the gallery of `count` items) and its video files. */
export function writeBigGallery(dir: string, count: number): BigGallery {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < VIDEO_FILES; i += 1)
    writeFileSync(join(dir, `clip-${i}.mp4`), jobVideo(`job-${i}`, { orientation: '16:9', seconds: 4 }));
  const manifest = manifestOf(count, dir);
  const { view, failed } = ledgerOf(manifest, dir);
  const htmlPath = join(dir, 'index.html');
  const report = buildStatusReport(manifest, view, Date.parse(DONE_AT));
  const order = new Map(manifest.items.map((item, index) => [item.id, index]));
  const model = buildGallery(manifest, view, report, {
    href: pageRelativeHref(manifest.file, htmlPath),
    manifestArg: 'batch.yaml',
    generatedAt: DONE_AT,
    ledger: { path: join(dir, 'big.sqlite'), exists: true, service: 'the sandbox' },
  });
  writeFileSync(htmlPath, renderGallery(model, attemptHistory(view.attempts, order)));
  const noir = manifest.items.filter((item) => item.matrix?.style === 'noir').length;
  return { htmlPath, items: count, failed, noir };
}
