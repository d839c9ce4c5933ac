import { writeFileAtomically } from '../downloads/write-atomically.js';
import { ExitCode, UserError } from '../errors.js';
import type { ItemExport } from '../ledger/item-exports.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ItemState } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import { type ExportRecord, exportRecord } from '../report/export-records.js';
import { shownFrom } from '../report/shown-path.js';

/** One record per item, in manifest order, read from the ledger as it goes (`export`); `states` empty: all. */
export function* exportedRecords(
  manifest: Manifest,
  ledger: Ledger | null,
  states: ReadonlySet<ItemState>,
): Generator<ExportRecord> {
  const shown = shownFrom(manifest.file);
  const rows: Iterator<ItemExport> | null = ledger
    ? ledger.itemExports(manifest.items.map((item) => item.id))
    : null;
  try {
    for (const item of manifest.items) {
      // One row per id, in the ids' order: the query walks them.
      const row = rows?.next().value as ItemExport | undefined;
      const record = exportRecord(item, row, shown);
      if (states.size === 0 || states.has(record.state)) yield record;
    }
  } finally {
    // Ends the statement, which would otherwise keep the connection busy as the ledger closes.
    rows?.return?.();
  }
}

/** The export in a file that appears whole or not at all; a folder that is not there is said, not made. */
export async function writeExportFile(path: string, chunks: Iterable<string>): Promise<void> {
  try {
    await writeFileAtomically(path, chunks, { makeFolder: false });
  } catch (error) {
    // A file-system refusal (no folder, no space, no permission) is the user's to fix, not a bug.
    if (typeof (error as { code?: unknown }).code !== 'string') throw error;
    throw new UserError(
      `cannot write ${path}: ${(error as Error).message}`,
      ExitCode.ItemsNotDone,
      'write_failed',
    );
  }
}
