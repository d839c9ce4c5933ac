import { stringify } from 'csv-stringify/sync';
import type { ItemExport } from '../ledger/item-exports.js';
import type { ItemState } from '../ledger/records.js';
import type { ManifestItem } from '../manifest/index.js';
import { formatUsd } from '../money.js';

/**
 * `export`: one record per item, for pipelines (docs/results.md). What was sent comes from the
 * ledger (the attempt that stands for the item); an item never sent shows what the manifest would
 * send. Pure: the command streams ledger rows in and writes the chunks out.
 */

export interface ExportFile {
  path: string;
  sha256: string;
  bytes: number;
}

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
}

export type ExportFormat = 'jsonl' | 'csv';

/** CSV columns, in record order; maps and lists are JSON text in their cell. */
const CSV_COLUMNS = [
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
] as const satisfies ReadonlyArray<keyof ExportRecord>;

export function exportRecord(
  item: ManifestItem,
  row: ItemExport | undefined,
  shown: (path: string) => string,
): ExportRecord {
  const sent = row !== undefined && row.input !== null;
  return {
    id: item.id,
    state: row?.state ?? 'pending',
    prompt: sent ? (row.prompt ?? '') : String(item.input.prompt),
    vars: sent ? row.vars : item.vars ? JSON.stringify(item.vars) : null,
    input: sent ? row.input! : unsentInput(item.input),
    model: sent ? row.model : item.model,
    job_id: row?.jobId ?? null,
    attempts: row?.attempts ?? 0,
    net_cost_usd: formatUsd(row?.netMicros ?? 0),
    files: filesOf(row?.files ?? null, shown),
    completed_at: row?.completedAt ?? null,
    expires_at: row?.expiresAt ?? null,
    error_code: row?.errorCode ?? null,
  };
}

function unsentInput(input: Record<string, unknown>): string {
  const { prompt: _prompt, ...rest } = input;
  return JSON.stringify(rest);
}

function filesOf(text: string | null, shown: (path: string) => string): ExportFile[] {
  if (text === null) return [];
  return (JSON.parse(text) as Array<[string, string, number]>).map(([path, sha256, bytes]) => ({
    path: shown(path),
    sha256,
    bytes,
  }));
}

const json = JSON.stringify;

/** One JSON Lines record, keys in the documented order; the JSON texts are spliced in as they are. */
function jsonLine(r: ExportRecord): string {
  return (
    `{"id":${json(r.id)},"state":${json(r.state)},"prompt":${json(r.prompt)},"vars":${r.vars ?? 'null'},` +
    `"input":${r.input},"model":${json(r.model)},"job_id":${json(r.job_id)},"attempts":${r.attempts},` +
    `"net_cost_usd":${json(r.net_cost_usd)},"files":${json(r.files)},"completed_at":${json(r.completed_at)},` +
    `"expires_at":${json(r.expires_at)},"error_code":${json(r.error_code)}}\n`
  );
}

function csvCells(r: ExportRecord): Array<string | number> {
  return CSV_COLUMNS.map((column) => {
    const value = r[column];
    if (column === 'files') return json(value);
    return value === null ? '' : (value as string | number);
  });
}

/**
 * The records as text, a few hundred at a time, so that 100,000 of them are never one string. CSV
 * quoting is csv-stringify's: a prompt holds commas, quotes and line breaks.
 */
export function* exportChunks(
  records: Iterable<ExportRecord>,
  format: ExportFormat,
  perChunk = 250,
): Generator<string> {
  if (format === 'csv') yield stringify([CSV_COLUMNS as readonly string[]]);
  let batch: ExportRecord[] = [];
  const flush = () => (format === 'csv' ? stringify(batch.map(csvCells)) : batch.map(jsonLine).join(''));
  for (const record of records) {
    batch.push(record);
    if (batch.length < perChunk) continue;
    yield flush();
    batch = [];
  }
  if (batch.length > 0) yield flush();
}
