import { stringify } from 'csv-stringify/sync';
import type { ExportFile, ExportFormat } from './export-records.js';

/**
 * `export --kept`: one record per manifest item, the take kept of it (docs/gallery.md, "Keepers"),
 * for a pipeline that publishes the picks. An item with one variant and one saved take is kept by
 * itself; an item without a kept take is left out (and counted by the caller).
 */
export interface KeptRecord {
  /** The manifest item's id (the group of its variants). */
  id: string;
  /** The ledger item kept: the item's id, or its variant's (`<id>.v<n>`). */
  item: string;
  variant: number;
  take: number;
  job_id: string | null;
  /** What that take's job cost, net of refunds, as a six-decimal string. */
  net_cost_usd: string;
  completed_at: string | null;
  files: ExportFile[];
}

const KEPT_COLUMNS = [
  'id',
  'item',
  'variant',
  'take',
  'job_id',
  'net_cost_usd',
  'completed_at',
  'files',
] as const satisfies ReadonlyArray<keyof KeptRecord>;

/** The kept records as JSON Lines (keys in column order) or CSV (files as JSON text in their cell). */
export function keptChunks(records: readonly KeptRecord[], format: ExportFormat): string[] {
  if (format === 'jsonl') return records.map((record) => `${JSON.stringify(record)}\n`);
  const cells = (r: KeptRecord) =>
    KEPT_COLUMNS.map((column) => (column === 'files' ? JSON.stringify(r.files) : (r[column] ?? '')));
  return [stringify([KEPT_COLUMNS as readonly string[], ...records.map(cells)])];
}
