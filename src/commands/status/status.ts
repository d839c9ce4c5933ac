import type { z } from 'zod';
import { keeperFields } from '../../batch/batch-takes.js';
import { sandboxLedgerBeside, statusSource, withLedger } from '../../batch/ledger-read.js';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  ledgerOptionsSchema,
  verifySchema,
} from '../../batch/options.js';
import { readingNotOwner } from '../../batch/reading-owner.js';
import { type StatusDocument, statusDocument } from '../../batch/status-document.js';
import { buildStatusStreamed } from '../../documents/status-report.js';
import type { Manifest } from '../../manifest/index.js';

export const statusOptionsSchema = ledgerOptionsSchema.extend({ verify: verifySchema });

export type StatusOptions = z.infer<typeof statusOptionsSchema>;

/**
 * Where each item stands in the ledger (`status --json`), and which saved files are missing or
 * altered on disk: by size and modification time, or by SHA-256 with `verify`.
 */
export async function status(manifest: Manifest, options: StatusOptions = {}): Promise<StatusDocument> {
  const { verify, ...checked } = checkOptions('status', statusOptionsSchema, options);
  const batch = batchOf(checkedManifest('status', manifest), checked);
  return withLedger(batch, async (ledger, note) => {
    const notOwner = await readingNotOwner(batch, ledger);
    const report = {
      ...(await buildStatusStreamed(batch.manifest, await statusSource(ledger, verify ?? false), Date.now())),
      ...(await keeperFields(batch.manifest, ledger)),
    };
    return statusDocument(report, {
      ...note,
      sandboxLedger: sandboxLedgerBeside(batch, note),
      ...(notOwner === null ? {} : { notOwner }),
    });
  });
}
