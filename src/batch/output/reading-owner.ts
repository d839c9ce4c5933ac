import { shownFromCwd } from '../../documents/shown-path.js';
import { checkOwner } from '../../downloads/output-owner.js';
import { UserError } from '../../errors.js';
import type { RecordReads } from '../../ledger/index.js';
import { isS3Uri, type ManifestHead } from '../../manifest/index.js';
import { withLedger } from '../ledger/ledger-read.js';
import type { Batch } from '../resolve/resolve-batch.js';
import { folderContextOf, outputFolderRefusal } from './output-owner-check.js';

/**
 * `status` and `export` only read. A ledger whose output folder another ledger owns is read all the
 * same when it records the batch (copy-ledger passed the folder to the copy, and the old ledger
 * still holds what it did), and the reader is told first: the returned words. A ledger that
 * records nothing of it (a wrong path, a new file) would read as a batch where nothing has run: it
 * is refused (exit 2), naming the ledger that owns the folder, as plan and run refuse it. Null: the
 * folder is this ledger's (or unclaimed, or a bucket, whose marker these reads do not fetch).
 */
export async function readingNotOwner(
  batch: Batch<ManifestHead>,
  ledger: Pick<RecordReads, 'hasAttempts'> | null,
): Promise<string | null> {
  const refusal = outputFolderRefusal(folderContextOf(batch, ''));
  if (refusal === null) return null;
  if (ledger === null || !(await ledger.hasAttempts()))
    throw new UserError(`this ledger was not read: ${refusal}`, 'output_owned');
  const { manifest, cwd } = batch;
  const verdict = isS3Uri(manifest.outputDir)
    ? null
    : checkOwner(manifest.outputDir, { manifest: manifest.name, ledger: batch.ledgerShown });
  const folder = shownFromCwd(cwd, manifest.outputDir);
  if (verdict?.kind !== 'other')
    return `this ledger does not own the output folder ${folder} (its owner marker cannot be read); shown as this ledger recorded it`;
  const owner = verdict.owner;
  const theirs = shownFromCwd(cwd, owner.ledgerAt ?? owner.ledger);
  const whose =
    owner.manifest === manifest.name
      ? `${manifest.name}'s ledger ${theirs}`
      : `${owner.manifest}'s ledger ${theirs}`;
  return (
    `this ledger no longer owns the output folder ${folder}: ${whose} does (a copy-ledger passes it to the copy), ` +
    `and runs go on there (\`ledger\` ${theirs}); shown as this ledger recorded it`
  );
}

/** The same, on a ledger opened for it alone (a reader that opens its own afterwards). */
export function checkReadingOwner(batch: Batch<ManifestHead>): Promise<string | null> {
  return withLedger(batch, (ledger) => readingNotOwner(batch, ledger));
}
