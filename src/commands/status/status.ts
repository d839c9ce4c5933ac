import type { z } from 'zod';
import { keeperFields, keeperFieldsOf } from '../../batch/ledger/batch-takes.js';
import {
  type LedgerRead,
  sandboxLedgerBeside,
  statusSource,
  withLedger,
} from '../../batch/ledger/ledger-read.js';
import { type StatusDocument, statusDocument } from '../../batch/ledger/status-document.js';
import { readingNotOwner } from '../../batch/output/reading-owner.js';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  ledgerOptionsSchema,
  verifySchema,
} from '../../batch/resolve/options.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import {
  isStreamed,
  NotStreamable,
  type StreamedManifest,
  wholeManifest,
} from '../../batch/resolve/streamed-manifest.js';
import { type RejectedRecord, rejectedRecordsOf } from '../../documents/rejected-records.js';
import { itemsHeld, SpooledItems } from '../../documents/spooled-items.js';
import type { StatusItem } from '../../documents/status-line.js';
import { buildStatusStreamed, type StatusReport } from '../../documents/status-report.js';
import type { RecordReads } from '../../ledger/index.js';
import type { Manifest, ManifestHead } from '../../manifest/index.js';
import { variantOfItem, variantsOfItems } from '../../runner/request-key.js';
import { statusStreamed } from './status-stream.js';

export const statusOptionsSchema = ledgerOptionsSchema.extend({ verify: verifySchema });

export type StatusOptions = z.infer<typeof statusOptionsSchema>;

/** The requests moderation rejected, shown with the service's message; nothing when there are none. */
async function rejectedFields(
  variantOf: (itemId: string) => number,
  ledger: RecordReads | null,
): Promise<{ rejected?: RejectedRecord[] }> {
  const rejected = ledger === null ? [] : rejectedRecordsOf(await ledger.rejectedAttempts(), variantOf);
  return rejected.length === 0 ? {} : { rejected };
}

/**
 * Where each item stands in the ledger (`status --json`), and which saved files are missing or
 * altered on disk: by size and modification time, or by SHA-256 with `verify`. Its items in an
 * array: for a batch small enough to hold (streamStatus gives a large one's a few at a time).
 */
export async function status(
  manifest: Manifest | StreamedManifest,
  options: StatusOptions = {},
): Promise<StatusDocument> {
  return itemsHeld(await streamStatus(manifest, options, 'status'));
}

/**
 * `status` of a manifest too large to hold (openManifest): its items made a chunk at a time and
 * kept in a temporary file until read, the whole document in bounded memory (docs/api.md). A
 * manifest held whole is read as `status` reads it and its items held. `items.close()` removes
 * the file.
 */
export async function streamStatus(
  manifest: Manifest | StreamedManifest,
  options: StatusOptions = {},
  call = 'streamStatus',
): Promise<StatusDocument<SpooledItems<StatusItem>>> {
  const { verify, ...checked } = checkOptions(call, statusOptionsSchema, options);
  if (isStreamed(manifest)) {
    try {
      return await streamedStatusOf(batchOf(manifest, checked), verify ?? false);
    } catch (error) {
      // A manifest whose items need each other is read whole (it throws before any line is written).
      if (!(error instanceof NotStreamable)) throw error;
    }
  }
  const batch = batchOf(checkedManifest(call, wholeManifest(manifest)), checked);
  return withLedger(batch, async (ledger, note) => {
    const notOwner = await readingNotOwner(batch, ledger);
    const source = await statusSource(ledger, verify ?? false);
    const report = await buildStatusStreamed(batch.manifest, source, Date.now());
    return documentOf(batch, note, notOwner, {
      ...report,
      items: SpooledItems.of(report.items),
      ...(await keeperFields(batch.manifest, ledger)),
      ...(await rejectedFields(variantsOfItems(batch.manifest.items), ledger)),
    });
  });
}

/** The status of a streamed manifest (status-stream.ts), with what a status says besides its items. */
function streamedStatusOf(
  batch: Batch<StreamedManifest>,
  verify: boolean,
): Promise<StatusDocument<SpooledItems<StatusItem>>> {
  return withLedger(batch, async (ledger, note) => {
    const notOwner = await readingNotOwner(batch, ledger);
    const { report, read } = await statusStreamed(batch.manifest, ledger, verify, Date.now());
    const listed = (id: string) => read.ids!.has(id);
    try {
      return documentOf(batch, note, notOwner, {
        ...report,
        ...(await keeperFieldsOf(batch.manifest, listed, ledger)),
        // A streamed manifest has no variants: an item it lists is variant 1.
        ...(await rejectedFields((id) => (listed(id) ? 1 : variantOfItem(new Map(), id)), ledger)),
      });
    } catch (error) {
      report.items.close();
      throw error;
    }
  });
}

function documentOf<Items extends Iterable<StatusItem>>(
  batch: Batch<ManifestHead>,
  note: LedgerRead,
  notOwner: string | null,
  report: StatusReport<Items>,
): StatusDocument<Items> {
  return statusDocument(report, {
    ...note,
    sandboxLedger: sandboxLedgerBeside(batch, note),
    ...(notOwner === null ? {} : { notOwner }),
  });
}
