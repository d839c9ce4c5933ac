import { resolve } from 'node:path';
import { z } from 'zod';
import {
  openForReading,
  readFailure,
  sandboxLedgerBeside,
  withLedger,
} from '../../batch/ledger/ledger-read.js';
import {
  refuseNamedTarget,
  savedFilesOf,
  type TargetKind,
  targetGuard,
} from '../../batch/named-files/named-target.js';
import { checkReadingOwner } from '../../batch/output/reading-owner.js';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  ledgerOptionsSchema,
  tellSchema,
} from '../../batch/resolve/options.js';
import { type Batch, callerCwd } from '../../batch/resolve/resolve-batch.js';
import {
  isStreamed,
  NotStreamable,
  type StreamedManifest,
  wholeManifest,
} from '../../batch/resolve/streamed-manifest.js';
import type { Warn } from '../../batch/resolve/warnings.js';
import { collectRows } from '../../collect-rows.js';
import { isExportHead } from '../../documents/export-head.js';
import {
  type ExportFormat,
  type ExportRecord,
  type ExportState,
  exportChunks,
} from '../../documents/export-records.js';
import { type KeptFileProblem, type KeptRecord, keptChunks } from '../../documents/kept-records.js';
import { type RejectedRecord, rejectedRecordsOf, rejectedYaml } from '../../documents/rejected-records.js';
import type { Manifest, ManifestHead } from '../../manifest/index.js';
import { variantsOfItems } from '../../runner/request-key.js';
import { exportedRecords, keptExport, streamedRecords, writeExportFile } from './export-items.js';

/** A ledger whose output folder another ledger owns: refused, or read and the caller told first. */
async function tellNotOwner(batch: Batch<ManifestHead>, warn: Warn | undefined): Promise<void> {
  const notOwner = await checkReadingOwner(batch);
  if (notOwner !== null) warn?.({ code: 'ledger_not_owner', message: notOwner });
}

/** The item states, and `removed`: the items paid for that the manifest no longer names. */
export const EXPORT_STATES = [
  'pending',
  'in_flight',
  'done',
  'failed',
  'checks_failed',
  'budget_exceeded',
  'expired',
  'removed',
] as const satisfies readonly ExportState[];

export const exportOptionsSchema = ledgerOptionsSchema.extend({
  /** Told first when the ledger no longer owns the output folder (`ledger_not_owner`): it is read all the same. */
  warn: tellSchema.warn,
  /** Only items in these states (`--state`), `removed` for those the manifest no longer names; default every item. */
  states: z.array(z.enum(EXPORT_STATES)).optional(),
});

export type ExportOptions = z.input<typeof exportOptionsSchema>;

/**
 * One record per item in manifest order (`export`), read from the ledger as it is iterated; the
 * ledger closes when the iteration ends, early or not. The options are checked at the call; the
 * ledger's claim on the output folder before the first record (readingNotOwner: a ledger that
 * records the batch but lost the folder to a copy is read, and `warn` told so first).
 */
export function exportRecords(
  manifest: Manifest | StreamedManifest,
  options: ExportOptions = {},
): AsyncGenerator<ExportRecord> {
  const checked = checkOptions('exportRecords', exportOptionsSchema, options);
  const batch = batchOf(
    isStreamed(manifest) ? manifest : checkedManifest('exportRecords', manifest),
    checked,
  );
  const states = new Set<ExportState>(checked.states ?? []);
  // Before any record: a ledger whose folder another owns is refused, or read and said so.
  return recordsOf(batch, states, () => tellNotOwner(batch, checked.warn));
}

/**
 * The records of a batch, its manifest held whole or read a chunk at a time (streamedRecords); one
 * that cannot be streamed is read whole, before any record.
 */
async function* recordsOf(
  batch: Batch<Manifest | StreamedManifest>,
  states: Set<ExportState>,
  first: () => Promise<void>,
): AsyncGenerator<ExportRecord> {
  await first();
  const { ledger, note } = await openForReading(batch);
  try {
    const { manifest } = batch;
    if (!isStreamed(manifest)) yield* exportedRecords(manifest, ledger, states);
    else
      yield* wholeIfNotStreamable(streamedRecords(manifest, ledger, states), () =>
        exportedRecords(loadManifestOf(manifest), ledger, states),
      );
  } catch (error) {
    throw readFailure(note.path, error);
  } finally {
    await ledger?.close();
  }
}

/** `records`, or, where they throw NotStreamable before the first one, `whole`'s. */
async function* wholeIfNotStreamable<T>(
  records: AsyncGenerator<T>,
  whole: () => AsyncGenerator<T>,
): AsyncGenerator<T> {
  let first: IteratorResult<T>;
  try {
    first = await records.next();
  } catch (error) {
    if (!(error instanceof NotStreamable)) throw error;
    yield* whole();
    return;
  }
  if (first.done) return;
  yield first.value;
  yield* records;
}

/** A batch's streamed manifest read whole, as the batch runs it (the sandbox's output location applied). */
function loadManifestOf(manifest: StreamedManifest): Manifest {
  return { ...wholeManifest(manifest), outputDir: manifest.outputDir };
}

/** Where an export goes (`to`, from `cwd`), as what, and whether it may replace a file of another kind. */
export interface ExportTarget {
  to?: string;
  format?: ExportFormat;
  /** Replace an existing file that is not an export (never a protected one: docs/results.md). */
  force?: boolean;
}

/**
 * Writes the export to a file that appears whole or not at all (`export --out`): written beside
 * it under a temporary name, synced, renamed into place. The door for named files
 * (batch/named-files/named-target.ts) decides first whether `to` may be written; the ledger's claim on the
 * output folder is checked before the file is begun.
 */
export async function writeExport(
  manifest: Manifest | StreamedManifest,
  options: ExportOptions & ExportTarget & { to: string },
): Promise<string> {
  const { to, format, force, ...rest } = options;
  const path = resolve(callerCwd(rest), to);
  const checked = checkOptions('writeExport', exportOptionsSchema, rest);
  const batch = batchOf(isStreamed(manifest) ? manifest : checkedManifest('writeExport', manifest), checked);
  await refuseExportTarget('writeExport', batch, path, force);
  await tellNotOwner(batch, checked.warn);
  const records = recordsOf(batch, new Set<ExportState>(checked.states ?? []), async () => {});
  try {
    await writeExportFile(path, exportChunks(records, format ?? 'jsonl'));
  } finally {
    await records.return(undefined);
  }
  return path;
}

/** Every record of exportRecords at once. */
export function exportItems(manifest: Manifest, options: ExportOptions = {}): Promise<ExportRecord[]> {
  return collectRows(exportRecords(manifest, options));
}

/**
 * What `exportKept` found: one record per kept item, the manifest items left out for having no
 * kept take, and the kept files that are not as saved.
 */
export interface KeptExport {
  records: KeptRecord[];
  withoutKeeper: string[];
  /**
   * Each kept file missing, altered (size or SHA-256) or, in a bucket that did not answer,
   * unchecked; its record is in `records` all the same. Empty when every kept file is as saved.
   */
  fileProblems: KeptFileProblem[];
  /** `not_done` when a kept file is not as saved (`fileProblems`; every record is written all the same), else `done`. */
  outcome: 'done' | 'not_done';
  /** The file written (`to`), or null. */
  path: string | null;
  /**
   * The ledger read (`exists` false: nothing has run there); `sandboxLedger` when that is so and a
   * sandbox run of this manifest left its ledger there, as `status` says.
   */
  ledger: { path: string; exists: boolean; sandboxLedger?: string };
}

/**
 * The kept take of each manifest item (`export --kept`, docs/gallery.md): its files, SHA-256,
 * variant, take and cost. An item with one variant and one saved take is kept by itself; items
 * with no kept take are left out and listed in `withoutKeeper`. A keeper the manifest no longer
 * asks for (its variant or its item gone) is a record with `in_manifest: false`. Every kept file
 * is read and compared with its recorded SHA-256 (`fileProblems`). With `to`, also written to
 * that file whole or not at all, as `format` (default jsonl).
 */
export async function exportKept(
  manifest: Manifest,
  options: ExportOptions & ExportTarget = {},
): Promise<KeptExport> {
  const { to, format, force, ...rest } = options;
  const checked = checkOptions('exportKept', exportOptionsSchema, rest);
  const batch = batchOf(checkedManifest('exportKept', manifest), checked);
  await tellNotOwner(batch, checked.warn);
  const path = to === undefined ? null : resolve(callerCwd(rest), to);
  if (path !== null) await refuseExportTarget('exportKept', batch, path, force);
  const { ledger: note, ...found } = await keptExport(batch);
  const sandboxLedger = sandboxLedgerBeside(batch, note);
  const kept = {
    ...found,
    outcome: found.fileProblems.length > 0 ? ('not_done' as const) : ('done' as const),
    ledger: { path: note.path, exists: note.exists, ...(sandboxLedger ? { sandboxLedger } : {}) },
  };
  if (path === null) return { ...kept, path: null };
  await writeExportFile(path, keptChunks(kept.records, format ?? 'jsonl'));
  return { ...kept, path };
}

/** What `exportRejected` found, and the file it wrote (null: none asked for). */
export interface RejectedExport {
  records: RejectedRecord[];
  path: string | null;
}

/**
 * The requests moderation rejected (`export --rejected`, docs/manifest.md, "Fallback prompts"):
 * each item, the prompt it sent and the service's message. With `to`, also written to that file
 * whole or not at all, as YAML a person edits and pastes back as prompts (rejectedYaml).
 */
export async function exportRejected(
  manifest: Manifest,
  options: ExportOptions & Omit<ExportTarget, 'format'> = {},
): Promise<RejectedExport> {
  const { to, force, ...rest } = options;
  const checked = checkOptions('exportRejected', exportOptionsSchema, rest);
  const batch = batchOf(checkedManifest('exportRejected', manifest), checked);
  await tellNotOwner(batch, checked.warn);
  const path = to === undefined ? null : resolve(callerCwd(rest), to);
  if (path !== null) await refuseExportTarget('exportRejected', batch, path, force);
  const records = await withLedger(batch, async (ledger) =>
    ledger === null
      ? []
      : rejectedRecordsOf(await ledger.rejectedAttempts(), variantsOfItems(batch.manifest.items)),
  );
  if (path !== null) await writeExportFile(path, [rejectedYaml(records)]);
  return { records, path };
}

/**
 * The door for named files (batch/named-files/named-target.ts) for an export: its own kind is a file whose
 * first line is an export's (documents/export-head.ts), JSON Lines or CSV, `--kept` or not, or
 * the YAML of `--rejected`.
 */
async function refuseExportTarget(
  call: 'writeExport' | 'exportKept' | 'exportRejected',
  batch: Batch<ManifestHead>,
  path: string,
  force: boolean | undefined,
): Promise<void> {
  const kind: TargetKind = {
    call,
    option: 'to',
    writes: 'the export',
    notOwn: 'is not an export mediabatch wrote',
    isOwn: (head) => isExportHead(head.toString('utf8')),
    forceable: true,
  };
  await refuseNamedTarget(path, targetGuard(batch), kind, {
    force: force ?? false,
    saved: savedFilesOf(batch),
  });
}
