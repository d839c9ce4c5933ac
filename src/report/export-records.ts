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

export interface ExportRecord {
  id: string;
  state: ItemState;
  prompt: string;
  vars: Record<string, unknown> | null;
  /** The input fields sent besides the prompt. */
  input: Record<string, unknown>;
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
) {
  const sent = row?.input ? (JSON.parse(row.input) as Record<string, unknown>) : null;
  const { prompt, ...input } = sent ?? item.input;
  const record: ExportRecord = {
    id: item.id,
    state: row?.state ?? 'pending',
    prompt: String(prompt ?? ''),
    vars: sent ? (row?.vars ? (JSON.parse(row.vars) as Record<string, unknown>) : null) : (item.vars ?? null),
    input,
    model: sent ? (row?.model ?? null) : item.model,
    job_id: row?.jobId ?? null,
    attempts: row?.attempts ?? 0,
    net_cost_usd: formatUsd(row?.netMicros ?? 0),
    files: filesOf(row?.files ?? null, shown),
    completed_at: row?.completedAt ?? null,
    expires_at: row?.expiresAt ?? null,
    error_code: row?.errorCode ?? null,
  };
  return record;
}

function filesOf(text: string | null, shown: (path: string) => string): ExportFile[] {
  if (text === null) return [];
  return (JSON.parse(text) as Array<[string, string, number]>).map(([path, sha256, bytes]) => ({
    path: shown(path),
    sha256,
    bytes,
  }));
}

const cell = (value: ExportRecord[keyof ExportRecord]): string | number =>
  value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : value;

/**
 * The records as text, a thousand at a time, so that 100,000 of them are never one string. CSV
 * quoting is csv-stringify's: a prompt holds commas, quotes and line breaks.
 */
export function* exportChunks(
  records: Iterable<ExportRecord>,
  format: ExportFormat,
  perChunk = 1000,
): Generator<string> {
  if (format === 'csv') yield stringify([CSV_COLUMNS as readonly string[]]);
  let batch: ExportRecord[] = [];
  const flush = () =>
    format === 'csv'
      ? stringify(batch.map((record) => CSV_COLUMNS.map((column) => cell(record[column]))))
      : batch.map((record) => `${JSON.stringify(record)}\n`).join('');
  for (const record of records) {
    batch.push(record);
    if (batch.length < perChunk) continue;
    yield flush();
    batch = [];
  }
  if (batch.length > 0) yield flush();
}
