import { z } from 'zod';
import { batchOf, checkedManifest, checkOptions, ledgerOptionsSchema } from '../../batch/resolve/options.js';
import type { Manifest } from '../../manifest/index.js';
import { copyBatchLedger, type LedgerCopied } from './ledger-copy.js';

const copyOptionsSchema = ledgerOptionsSchema.extend({
  /** Where the copy goes: a ledger file's path (from `cwd`), or a postgres:// URL. */
  to: z.string().min(1),
});

export type CopyLedgerOptions = z.input<typeof copyOptionsSchema>;

/**
 * What `copyLedger` copied: `from` and `to` as people may see them (a URL without its password),
 * and how many rows of each kind the batch's record holds.
 */
export type LedgerCopy = LedgerCopied;

/**
 * Copies the batch's whole record (items, attempts, jobs, charges, files, takes, events, runs) from
 * its ledger (`ledger`, default the manifest's own) to `to`, SQLite to PostgreSQL or back
 * (`mediabatch copy-ledger`, docs/shared-ledger.md). The source is only read. Refused with nothing
 * written while a run holds either ledger (`ledger_held`), when the source has no such batch
 * (`ledger_missing`) and when `to` already records items of it (`ledger_not_empty`). The output
 * location's claim passes to the copy when the source held it (`outputPassed`).
 */
export async function copyLedger(manifest: Manifest, options: CopyLedgerOptions): Promise<LedgerCopy> {
  const { to, ...rest } = checkOptions('copyLedger', copyOptionsSchema, options);
  return copyBatchLedger(batchOf(checkedManifest('copyLedger', manifest), rest), to);
}
