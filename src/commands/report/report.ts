import { z } from 'zod';
import { type GalleryWritten, writeBatchGallery } from '../../batch/gallery/batch-gallery.js';
import { type LedgerRead, readLedger } from '../../batch/ledger/ledger-read.js';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  ledgerOptionsSchema,
  serviceOptionsSchema,
} from '../../batch/resolve/options.js';
import type { Warning } from '../../batch/resolve/warnings.js';
import { attemptHistory } from '../../documents/render-text.js';
import { buildStatusReport, type StatusReport } from '../../documents/status-report.js';
import type { Manifest } from '../../manifest/index.js';

/** The whole record of a batch (`mediabatch report`): every item, and every attempt of each. */
export interface BatchReport {
  status: StatusReport;
  attempts: ReturnType<typeof attemptHistory>;
  ledger: LedgerRead;
  generatedAt: string;
}

/** Where every item stands, with each attempt it took (`report`, the text). */
export async function report(
  manifest: Manifest,
  options: z.input<typeof ledgerOptionsSchema> = {},
): Promise<BatchReport> {
  const checked = checkOptions('report', ledgerOptionsSchema, options);
  const batch = batchOf(checkedManifest('report', manifest), checked);
  const { view, ...ledger } = await readLedger(batch);
  const now = new Date();
  const order = new Map(batch.manifest.items.map((item, index) => [item.id, index]));
  return {
    status: buildStatusReport(batch.manifest, view, now.getTime()),
    attempts: attemptHistory(view.attempts, order),
    ledger,
    generatedAt: now.toISOString(),
  };
}

const galleryOptionsSchema = serviceOptionsSchema.omit({ baseUrl: true, apiKey: true }).extend({
  /** A file, an `s3://` key below a bucket location, or '' (the default) for `<output>/index.html`. */
  to: z.string().optional(),
  /** How long a bucket's presigned links work, 1 minute to 7 days; default 7 days. */
  urlLifetimeSeconds: z.number().int().positive().optional(),
  /** Replace a file that is not a gallery page mediabatch wrote (never a guarded file). */
  force: z.boolean().optional(),
  /** Told each warning as `{ code, message }`. */
  warn: z.custom<(warning: Warning) => void>((value) => typeof value === 'function').optional(),
});

export type GalleryOptions = z.input<typeof galleryOptionsSchema>;
export type { GalleryWritten };

/** Writes the batch's gallery page (`report --html`): locally, or into its bucket with presigned links. */
export function writeGallery(manifest: Manifest, options: GalleryOptions = {}): Promise<GalleryWritten> {
  const { to, urlLifetimeSeconds, force, warn, ...rest } = checkOptions(
    'writeGallery',
    galleryOptionsSchema,
    options,
  );
  const batch = batchOf(checkedManifest('writeGallery', manifest), rest);
  return writeBatchGallery(
    batch,
    { to: to ?? '', urlLifetimeSeconds: urlLifetimeSeconds ?? null, force: force ?? false },
    warn ?? (() => undefined),
  );
}
