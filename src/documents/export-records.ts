import { stringify } from 'csv-stringify/sync';
import type { ItemExport, ItemState } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import { formatUsd } from '../money.js';

/**
 * `export`: one record per item, for pipelines (docs/results.md). What was sent comes from the
 * ledger (the attempt that stands for the item); an item never sent shows what the manifest would
 * send. Items the ledger paid for that the manifest no longer names follow, `in_manifest: false`,
 * so that the records add up to what was spent and name every file saved. Pure: the command
 * streams ledger rows in and writes the chunks out.
 */

export interface ExportFile {
  path: string;
  sha256: string;
  bytes: number;
}

/** A take's check against its request (docs/checks.md): null for a take saved before checks. */
export interface ExportCheck {
  outcome: 'passed' | 'failed' | 'unchecked';
  reason: string | null;
  /** The lowest score a check of your own gave the take; absent when none gave one. */
  score?: number;
}

/** An earlier take of the item, still on record (`<name>.take<T>.mp4`), and whether it is the kept one. */
export interface EarlierTake {
  take: number;
  kept: boolean | null;
  files: ExportFile[];
  check: ExportCheck | null;
}

/**
 * The takes of one item as export shows them (commands/export/export-items.ts): the take its files are, whether
 * it is kept (null: its item has no keeper), and its earlier takes.
 */
export interface RecordTakes {
  take: number | null;
  kept: boolean | null;
  earlier: EarlierTake[];
  /** The check of the take `files` are. */
  check: ExportCheck | null;
}

const NO_TAKES: RecordTakes = { take: null, kept: null, earlier: [], check: null };
const NO_EARLIER: EarlierTake[] = [];
const earlierJson = (takes: readonly EarlierTake[]) => (takes.length === 0 ? '[]' : json(takes));

/**
 * One item's record. `vars` and `input` are JSON text as the ledger holds them: at 100,000
 * items, parsing them only to write them again was a fifth of the time.
 */
export interface ExportRecord {
  id: string;
  state: ItemState;
  prompt: string;
  /** A JSON object, or null for an item without variables. */
  vars: string | null;
  /** The input fields sent besides the prompt, as a JSON object. */
  input: string;
  model: string | null;
  job_id: string | null;
  attempts: number;
  net_cost_usd: string;
  files: ExportFile[];
  completed_at: string | null;
  expires_at: string | null;
  error_code: string | null;
  /** False for an item the ledger paid for that the manifest no longer names (removed or renamed). */
  in_manifest: boolean;
  /** The take `files` are (1, then one more per redo or edit); null when none was saved. */
  take: number | null;
  /** Whether `files` are the item's kept take (docs/gallery.md, Keepers); null while no take is kept. */
  kept: boolean | null;
  /** The item's earlier takes still on record, each with whether it is kept: the rest to delete once one is. */
  earlier_takes: EarlierTake[];
  /** The check of the take `files` are (docs/checks.md); null when none was saved or checked. */
  check: ExportCheck | null;
}

/** What `--state` can select: an item state, or `removed` for the items not in the manifest. */
export type ExportState = ItemState | 'removed';

/**
 * Whether `--state` keeps a record (none given: every record). A removed item keeps its state in
 * its record but is selected by `removed` alone, so `--state done` means the manifest's done items,
 * as it did before removed items were exported.
 */
export function selectedBy(states: ReadonlySet<ExportState>, record: ExportRecord): boolean {
  return states.size === 0 || states.has(record.in_manifest ? record.state : 'removed');
}

export type ExportFormat = 'jsonl' | 'csv';

/** CSV columns, in record order; maps and lists are JSON text in their cell. */
export const CSV_COLUMNS = [
  'id',
  'state',
  'prompt',
  'vars',
  'input',
  'model',
  'job_id',
  'attempts',
  'net_cost_usd',
  'files',
  'completed_at',
  'expires_at',
  'error_code',
  'in_manifest',
  'take',
  'kept',
  'earlier_takes',
  'check',
] as const satisfies ReadonlyArray<keyof ExportRecord>;

export function exportRecord(
  item: ManifestItem,
  row: ItemExport | undefined,
  shown: (path: string) => string,
  takes: RecordTakes = NO_TAKES,
): ExportRecord {
  return new RecordOfItem(item, row, shown, takes);
}

/** The record of an item the ledger paid for that the manifest no longer names: all from the ledger. */
export function removedRecord(
  row: ItemExport,
  shown: (path: string) => string,
  takes: RecordTakes = NO_TAKES,
): ExportRecord {
  return new RecordOfItem(null, row, shown, takes);
}

/** A class, not an object literal, as every object made per item in export (ledger/item-exports.ts). */
class RecordOfItem implements ExportRecord {
  id: string;
  state: ItemState;
  prompt: string;
  vars: string | null;
  input: string;
  model: string | null;
  job_id: string | null;
  attempts: number;
  net_cost_usd: string;
  files: ExportFile[];
  completed_at: string | null;
  expires_at: string | null;
  error_code: string | null;
  in_manifest: boolean;
  take: number | null;
  kept: boolean | null;
  earlier_takes: EarlierTake[];
  check: ExportCheck | null;

  /** `item` null: an item the manifest no longer names, which has attempts (it was paid for). */
  constructor(
    item: ManifestItem | null,
    row: ItemExport | undefined,
    shown: (path: string) => string,
    takes: RecordTakes,
  ) {
    const sent = row !== undefined && row.input !== null;
    this.id = item?.id ?? row!.itemId;
    this.state = row?.state ?? 'pending';
    this.prompt = sent ? (row.prompt ?? '') : String(item!.input.prompt);
    this.vars = sent ? row.vars : item!.vars ? JSON.stringify(item!.vars) : null;
    this.input = sent ? row.input! : unsentInput(item!.input);
    this.model = sent ? row.model : item!.model;
    this.job_id = row?.jobId ?? null;
    this.attempts = row?.attempts ?? 0;
    this.net_cost_usd = formatUsd(row?.netMicros ?? 0);
    this.files =
      row === undefined
        ? []
        : row.files.map((file) => new FileOfRecord(shown(file.path), file.sha256, file.bytes));
    this.completed_at = row?.completedAt ?? null;
    this.expires_at = row?.expiresAt ?? null;
    this.error_code = row?.errorCode ?? null;
    this.in_manifest = item !== null;
    this.take = takes.take;
    this.kept = takes.kept;
    // Most items have no earlier take: one shared empty list, not 100,000 of them.
    this.earlier_takes =
      takes.earlier.length === 0
        ? NO_EARLIER
        : takes.earlier.map((earlier) => ({
            take: earlier.take,
            kept: earlier.kept,
            files: earlier.files.map((file) => new FileOfRecord(shown(file.path), file.sha256, file.bytes)),
            check: earlier.check,
          }));
    this.check = takes.check;
  }
}

class FileOfRecord implements ExportFile {
  constructor(
    readonly path: string,
    readonly sha256: string,
    readonly bytes: number,
  ) {}
}

function unsentInput(input: Record<string, unknown>): string {
  const { prompt: _prompt, ...rest } = input;
  return JSON.stringify(rest);
}

const json = JSON.stringify;
/** Null as JSON: most cells of a record not sent yet. */
const jsonOrNull = (text: string | null) => (text === null ? 'null' : json(text));

/**
 * One JSON Lines record, keys in the documented order; the JSON texts are spliced in as they are,
 * and so are the state and the cost, whose characters never need escaping.
 */
function jsonLine(r: ExportRecord): string {
  return (
    `{"id":${json(r.id)},"state":"${r.state}","prompt":${json(r.prompt)},"vars":${r.vars ?? 'null'},` +
    `"input":${r.input},"model":${jsonOrNull(r.model)},"job_id":${jsonOrNull(r.job_id)},"attempts":${r.attempts},` +
    `"net_cost_usd":"${r.net_cost_usd}","files":${json(r.files)},"completed_at":${jsonOrNull(r.completed_at)},` +
    `"expires_at":${jsonOrNull(r.expires_at)},"error_code":${jsonOrNull(r.error_code)},"in_manifest":${r.in_manifest},` +
    `"take":${r.take},"kept":${r.kept},"earlier_takes":${earlierJson(r.earlier_takes)},` +
    `"check":${r.check === null ? 'null' : json(r.check)}}\n`
  );
}

/** One CSV record's cells, in CSV_COLUMNS' order; null is an empty cell, lists JSON text. */
function csvCells(r: ExportRecord): Array<string | number> {
  return [
    r.id,
    r.state,
    r.prompt,
    r.vars ?? '',
    r.input,
    r.model ?? '',
    r.job_id ?? '',
    r.attempts,
    r.net_cost_usd,
    json(r.files),
    r.completed_at ?? '',
    r.expires_at ?? '',
    r.error_code ?? '',
    String(r.in_manifest),
    r.take ?? '',
    r.kept === null ? '' : String(r.kept),
    earlierJson(r.earlier_takes),
    r.check === null ? '' : json(r.check),
  ];
}

/** The records as text, a few hundred at a time, so that 100,000 of them are never one string. */
export async function* exportChunks(
  records: Iterable<ExportRecord> | AsyncIterable<ExportRecord>,
  format: ExportFormat,
  perChunk = 250,
): AsyncGenerator<string> {
  // CSV quoting is csv-stringify's (a prompt holds commas, quotes and line breaks), a chunk at once.
  if (format === 'csv') yield stringify([CSV_COLUMNS as readonly string[]]);
  let batch: ExportRecord[] = [];
  const flush = () => (format === 'csv' ? stringify(batch.map(csvCells)) : batch.map(jsonLine).join(''));
  for await (const record of records) {
    batch.push(record);
    if (batch.length < perChunk) continue;
    yield flush();
    batch = [];
  }
  if (batch.length > 0) yield flush();
}
