import { BatchTakes, keeperItems, keptRecord } from '../../batch/ledger/batch-takes.js';
import { type LedgerRead, withLedger } from '../../batch/ledger/ledger-read.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { StreamedManifest } from '../../batch/resolve/streamed-manifest.js';
import {
  type ExportRecord,
  type ExportState,
  exportRecord,
  removedRecord,
  selectedBy,
} from '../../documents/export-records.js';
import type { KeptFileProblem, KeptRecord } from '../../documents/kept-records.js';
import { shownFrom } from '../../documents/shown-path.js';
import { writeFileAtomically } from '../../downloads/write-atomically.js';
import { UserError } from '../../errors.js';
import type { ItemExport, ReadingLedger, RecordReads, TakeLedger } from '../../ledger/index.js';
import type { Manifest, ManifestItem } from '../../manifest/index.js';
import { keptFileProblems } from './kept-files-check.js';

/**
 * One record per item, in manifest order, read from the ledger as it goes (`export`); then the
 * items the ledger paid for that the manifest no longer names, so the records add up to what was
 * spent. `states` empty: all.
 */
export async function* exportedRecords(
  manifest: Manifest,
  ledger: (RecordReads & ReadingLedger & TakeLedger) | null,
  states: ReadonlySet<ExportState>,
): AsyncGenerator<ExportRecord> {
  const ids = manifest.items.map((item) => item.id);
  // Read before the walk: while its rows stream, the connection runs nothing else.
  const takes = await BatchTakes.read(manifest, ledger, 'records');
  yield* recordsOf([manifest.items], ids, { ledger, states, takes, shown: shownFrom(manifest.file) });
}

/**
 * exportedRecords of a manifest too large to hold (docs/performance.md, "Issue 53"): its items read
 * through once first, so that a manifest with a problem is refused before any record (as one held
 * whole is), then again a chunk at a time, each chunk's rows read from the ledger by its ids (one
 * walk: items, attempts and files, a page at a time). Only the ids are held across the walk.
 * Throws NotStreamable, before any record, for a manifest whose items need each other.
 */
export async function* streamedRecords(
  manifest: StreamedManifest,
  ledger: (RecordReads & ReadingLedger & TakeLedger) | null,
  states: ReadonlySet<ExportState>,
): AsyncGenerator<ExportRecord> {
  // Every problem before any record: the manifest is read through once, its ids held from then on.
  const { chunks: checking, read: checked } = manifest.readItems();
  for await (const _chunk of checking);
  const listed = checked.ids!;
  const items = await keeperItems((id) => listed.has(id), ledger);
  const takes = await BatchTakes.read({ items }, ledger, 'records');
  const { chunks } = manifest.readItems(undefined, true);
  yield* recordsOf(chunks, listed, { ledger, states, takes, shown: shownFrom(manifest.file) });
}

interface RecordsContext {
  ledger: (RecordReads & ReadingLedger & TakeLedger) | null;
  states: ReadonlySet<ExportState>;
  takes: BatchTakes;
  shown: ReturnType<typeof shownFrom>;
}

/** The records of the manifest's items, a chunk at a time, then those of the items it no longer names. */
async function* recordsOf(
  chunks: AsyncIterable<readonly ManifestItem[]> | Iterable<readonly ManifestItem[]>,
  listed: Parameters<ReadingLedger['paidItemsNotIn']>[0],
  { ledger, states, takes, shown }: RecordsContext,
): AsyncGenerator<ExportRecord> {
  for await (const items of chunks)
    yield* walk(ledger?.itemExports(items.map((item) => item.id)) ?? null, items, (item, row) => {
      const record = exportRecord(
        item,
        row,
        shown,
        takes.recordTakes(item.id, (row?.files.length ?? 0) > 0, row?.jobId ?? null),
      );
      return selectedBy(states, record) ? record : null;
    });
  // Asked only when they can be selected: finding them reads every attempt of the batch.
  if (ledger === null || (states.size > 0 && !states.has('removed'))) return;
  const removed = await ledger.paidItemsNotIn(listed);
  yield* walk(ledger.itemExports(removed), removed, (id, row) =>
    removedRecord(row!, shown, takes.recordTakes(id, row!.files.length > 0, row!.jobId)),
  );
}

/** One row per key, in the keys' order: the query walks them. */
async function* walk<K>(
  rows: AsyncIterable<ItemExport> | null,
  keys: readonly K[],
  recordOf: (key: K, row: ItemExport | undefined) => ExportRecord | null,
): AsyncGenerator<ExportRecord> {
  const each = rows?.[Symbol.asyncIterator]() ?? null;
  try {
    for (const key of keys) {
      const record = recordOf(key, (await each?.next())?.value as ItemExport | undefined);
      if (record !== null) yield record;
    }
  } finally {
    // Ends the read, which would otherwise keep the connection busy as the ledger closes.
    await each?.return?.();
  }
}

/** The export in a file that appears whole or not at all; a folder that is not there is said, not made. */
export async function writeExportFile(
  path: string,
  chunks: AsyncIterable<string> | Iterable<string>,
): Promise<void> {
  try {
    await writeFileAtomically(path, chunks, { makeFolder: false });
  } catch (error) {
    // A file-system refusal (no folder, no space, no permission) is the user's to fix, not a bug.
    if (typeof (error as { code?: unknown }).code !== 'string') throw error;
    throw new UserError(`cannot write ${path}: ${(error as Error).message}`, 'write_failed');
  }
}

/** What `export --kept` found (docs/gallery.md): the records, the items left out, the kept files not as saved. */
export interface KeptExportFound {
  records: KeptRecord[];
  withoutKeeper: string[];
  fileProblems: KeptFileProblem[];
  /** The ledger read, and whether it exists. */
  ledger: LedgerRead;
}

/**
 * `export --kept`: the kept take of each manifest item (and of each item the manifest no longer
 * names whose keeper is on record), the items that have none, and each kept file checked.
 */
export async function keptExport(
  batch: Pick<Batch, 'manifest' | 'ledgerShown' | 'ledger' | 'settings'>,
): Promise<KeptExportFound> {
  const { kept, withoutKeeper, ledger } = await withLedger(batch, async (opened, note) => ({
    ...(await BatchTakes.read(batch.manifest, opened)).keptTakes(),
    ledger: note,
  }));
  const shown = shownFrom(batch.manifest.file);
  return {
    records: kept.map((each) => keptRecord(each, shown)),
    withoutKeeper,
    fileProblems: await keptFileProblems(kept, batch.settings.storageEnv, shown),
    ledger,
  };
}
