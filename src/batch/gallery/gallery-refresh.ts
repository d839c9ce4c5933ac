import { shownFromCwd } from '../../documents/shown-path.js';
import { type Fields, UserError } from '../../errors.js';
import type { ReadingLedger, RecordReads, SharedLedger, TakeLedger } from '../../ledger/index.js';
import type { LedgerRead } from '../ledger/ledger-read.js';
import type { Batch } from '../resolve/resolve-batch.js';
import type { Warn } from '../resolve/warnings.js';
import { type GalleryWritten, writeBatchGallery } from './batch-gallery.js';

/**
 * The gallery a run leaves behind (docs/gallery.md, "After every run"): written or refreshed at
 * `<output location>/index.html` whenever the run ends with an outcome (done, failures, budget, a
 * drain), so the page a person opens in the morning is the ledger as the run left it. It follows
 * the rules of `report --html` with no file named and no `force`: a file there that is not a
 * gallery page mediabatch wrote is left alone. It is the run's by-product, never its result: any
 * failure is a warning, and the run's outcome and exit code stay what the items made them. `keep`
 * refreshes it the same way, so that the page's picks start from the keepers just recorded.
 */
export async function refreshBatchGallery(
  batch: Batch,
  ledger: SharedLedger & RecordReads & ReadingLedger & TakeLedger,
  outcome: { ledger: LedgerRead },
  warn: Warn,
): Promise<GalleryWritten | null> {
  try {
    // Read from the run's own ledger: no second connection, and every write of the run is seen.
    const open = { ledger, note: outcome.ledger };
    return await writeBatchGallery(batch, { to: '', urlLifetimeSeconds: null, force: false }, warn, open);
  } catch (error) {
    const fields: Fields = error instanceof UserError ? error.fields : {};
    // A file of someone else's at the page's name: foreign, or (the usual place) in the output folder.
    const refused =
      error instanceof UserError &&
      error.code === 'target_refused' &&
      (fields.guarded === null || fields.reason === 'owned_file');
    const message = refused
      ? `${shownFromCwd(batch.cwd, String(fields.target))} exists and is not a gallery page mediabatch wrote, so it was left as it is and no gallery was written; move it away, or write the gallery to another file (report's \`to\`)`
      : `no gallery was written: ${(error as Error).message}`;
    warn({ code: 'gallery_not_written', message, fields });
    return null;
  }
}
