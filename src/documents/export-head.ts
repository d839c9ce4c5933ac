import { CSV_COLUMNS } from './export-records.js';
import { KEPT_COLUMNS } from './kept-records.js';

/**
 * Whether a file's first bytes are an export mediabatch wrote (`export --out`, with or without
 * `--kept`), so that writing the export again replaces it (docs/results.md, "The door for named
 * files"): its first line is one of export's CSV headers, or a JSON object with exactly a record's
 * keys in order; an empty file is an export of no records. Cheap: only the first line is read.
 */
export function isExportHead(head: string): boolean {
  if (head === '') return true;
  const end = head.indexOf('\n');
  // A first line longer than the head read cannot be told: not recognised.
  if (end < 0) return false;
  const line = head.slice(0, end).replace(/\r$/, '');
  const layouts: ReadonlyArray<readonly string[]> = [CSV_COLUMNS, KEPT_COLUMNS];
  if (layouts.some((columns) => line === columns.join(','))) return true;
  let keys: string[];
  try {
    const value: unknown = JSON.parse(line);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
    keys = Object.keys(value);
  } catch {
    return false;
  }
  return layouts.some((columns) => columns.join(',') === keys.join(','));
}
