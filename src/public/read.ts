import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { keeperFields } from '../batch/batch-takes.js';
import { exportedRecords, keptExport, writeExportFile } from '../batch/export-items.js';
import { openForReading, readFailure, statusSource, withLedger } from '../batch/ledger-read.js';
import { refuseReadingOthersFolder } from '../batch/output-owner-check.js';
import { planBatch } from '../batch/plan-batch.js';
import type { Batch } from '../batch/resolve-batch.js';
import { ignoreWarnings } from '../batch/warnings.js';
import { collectRows } from '../collect-rows.js';
import { ExitCode, UserError } from '../errors.js';
import {
  formatProblem,
  loadManifest as loadFile,
  loadManifestText,
  type Manifest,
  type ManifestProblem,
  type ManifestResult,
} from '../manifest/index.js';
import {
  type ExportFormat,
  type ExportRecord,
  type ExportState,
  exportChunks,
} from '../report/export-records.js';
import { type KeptFileProblem, type KeptRecord, keptChunks } from '../report/kept-records.js';
import { buildStatusStreamed } from '../report/status-report.js';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  type ExportOptions,
  exportOptionsSchema,
  type PlanDocument,
  type PlanOptions,
  planOptionsSchema,
  type StatusOptions,
  statusOptionsSchema,
} from './options.js';
import { type StatusDocument, statusDocument } from './status-document.js';

/** A manifest with problems: every one, each with its file, line and column (exit code 2). */
export class ManifestError extends UserError {
  constructor(readonly problems: ManifestProblem[]) {
    const count = problems.length;
    super(
      `${count} problem${count === 1 ? '' : 's'} in the manifest:\n${problems.map(formatProblem).join('\n')}`,
      ExitCode.Usage,
      'manifest_invalid',
    );
    this.name = 'ManifestError';
  }

  /** Every problem on a line of its own, file:line:column first. */
  get lines(): string {
    return this.problems.map(formatProblem).join('\n');
  }
}

/** A manifest from a file, or from YAML text read as if it were a file in `baseDir`. */
export type ManifestSource = string | { yaml: string; baseDir: string; fileName?: string };

/** Reads and checks a manifest; throws ManifestError listing every problem. */
export function loadManifest(source: ManifestSource): Manifest {
  let result: ManifestResult;
  if (typeof source === 'string') result = loadFile(resolve(source));
  else if (source && typeof source.yaml === 'string' && typeof source.baseDir === 'string')
    result = loadManifestText(resolve(source.baseDir, source.fileName ?? 'manifest.yaml'), source.yaml);
  else throw new UserError('loadManifest(): give a path, or { yaml, baseDir }');
  if (!result.ok) throw new ManifestError(result.problems);
  return result.manifest;
}

/** What `run` would do now, with the checks `mediabatch plan` makes (`plan --json`). */
export async function plan(manifest: Manifest, options: PlanOptions = {}): Promise<PlanDocument> {
  const { warn, verify, regenerateExpired, retryFailed, redefine, ...rest } = checkOptions(
    'plan',
    planOptionsSchema,
    options,
  );
  const batch = batchOf(checkedManifest('plan', manifest), rest);
  const planned = await planBatch(batch, warn ?? ignoreWarnings, {
    verify,
    regenerateExpired,
    retryFailed,
    redefine,
  });
  return { ...planned.doc, ledger: planned.ledger };
}

/**
 * Where each item stands in the ledger (`status --json`), and which saved files are missing or
 * altered on disk: by size and modification time, or by SHA-256 with `verify`.
 */
export async function status(manifest: Manifest, options: StatusOptions = {}): Promise<StatusDocument> {
  const { verify, ...checked } = checkOptions('status', statusOptionsSchema, options);
  const batch = batchOf(checkedManifest('status', manifest), checked);
  refuseReadingOthersFolder(batch);
  return withLedger(batch, async (ledger, note) => {
    const report = {
      ...(await buildStatusStreamed(batch.manifest, await statusSource(ledger, verify ?? false), Date.now())),
      ...(await keeperFields(batch.manifest, ledger)),
    };
    return statusDocument(report, { ...note, sandboxLedger: sandboxLedgerBeside(batch, note) });
  });
}

/** Nothing has run here, but a sandbox run has (after `npm run demo`, say): where its ledger is. */
function sandboxLedgerBeside(
  batch: { sandboxLedger: string | null },
  note: { exists: boolean },
): string | null {
  const there = !note.exists && batch.sandboxLedger !== null && existsSync(batch.sandboxLedger);
  return there ? batch.sandboxLedger : null;
}

/**
 * One record per item in manifest order (`export`), read from the ledger as it is iterated; the
 * ledger closes when the iteration ends, early or not. The options and the ledger's claim on the
 * output folder are checked at the call, before any record (or file) is written.
 */
export function exportRecords(manifest: Manifest, options: ExportOptions = {}): AsyncGenerator<ExportRecord> {
  const checked = checkOptions('exportRecords', exportOptionsSchema, options);
  const batch = batchOf(checkedManifest('exportRecords', manifest), checked);
  refuseReadingOthersFolder(batch);
  return recordsOf(batch, new Set<ExportState>(checked.states ?? []));
}

async function* recordsOf(batch: Batch, states: Set<ExportState>): AsyncGenerator<ExportRecord> {
  const { ledger, note } = await openForReading(batch);
  try {
    yield* exportedRecords(batch.manifest, ledger, states);
  } catch (error) {
    throw readFailure(note.path, error);
  } finally {
    await ledger?.close();
  }
}

/**
 * Writes the export to a file that appears whole or not at all (`export --out`): written beside
 * it under a temporary name, synced, renamed into place.
 */
export async function writeExport(
  manifest: Manifest,
  options: ExportOptions & { to: string; format?: ExportFormat },
): Promise<string> {
  const { to, format, ...rest } = options;
  const path = resolve(rest.cwd ?? process.cwd(), to);
  const records = exportRecords(manifest, rest);
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
  options: ExportOptions & { to?: string; format?: ExportFormat } = {},
): Promise<KeptExport> {
  const { to, format, ...rest } = options;
  const checked = checkOptions('exportKept', exportOptionsSchema, rest);
  const batch = batchOf(checkedManifest('exportKept', manifest), checked);
  refuseReadingOthersFolder(batch);
  const { ledger: note, ...found } = await keptExport(batch);
  const sandboxLedger = sandboxLedgerBeside(batch, note);
  const kept = {
    ...found,
    ledger: { path: note.path, exists: note.exists, ...(sandboxLedger ? { sandboxLedger } : {}) },
  };
  if (to === undefined) return { ...kept, path: null };
  const path = resolve(rest.cwd ?? process.cwd(), to);
  await writeExportFile(path, keptChunks(kept.records, format ?? 'jsonl'));
  return { ...kept, path };
}
