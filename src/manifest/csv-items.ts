/**
 * The CSV side of `items_from`: csv-parse's records made items, a row at a time, so that the
 * whole-file reader and the streamed one (items-from-stream.ts) share every rule.
 */
import type { Options as CsvParseOptions } from 'csv-parse';
import { parse as parseCsv } from 'csv-parse/sync';
import { closestMatch } from '../suggest.js';
import { headerColumn, ITEM_COLUMNS, VARS_PREFIX } from './csv-columns.js';
import { formatPath, type Path, type Position, type ProblemList, type Source } from './problems.js';
import type { RawItem } from './raw-item.js';

export interface CsvRecord {
  record: string[];
  info: { lines: number };
}

function lineBreaks(cells: readonly string[]): number {
  let count = 0;
  for (const cell of cells) count += cell.match(/\r\n|\r|\n/g)?.length ?? 0;
  return count;
}

export function csvItems(
  file: string,
  text: string,
  problems: ProblemList,
  take: (raw: RawItem) => void,
  sharedPrompt: boolean,
): void {
  const records = parseCsvRecords(file, text, problems);
  if (records === null) return;
  const [head, ...rows] = records;
  if (!head) {
    problems.atDocument(file, 'the CSV file is empty: expected a header row such as "id,prompt"');
    return;
  }
  const header = readHeader(file, head, problems, sharedPrompt);
  if (header === null) return;
  takeRows(file, header, rows, problems, take);
}

/** Every record with its line; rows csv-parse skipped become problems, a fatal error ends with null. */
function parseCsvRecords(file: string, text: string, problems: ProblemList): CsvRecord[] | null {
  const skipped: CsvSkip[] = [];
  let records: CsvRecord[];
  try {
    records = parseCsv(
      text,
      csvOptions((error) => skipped.push(error)),
    ) as unknown as CsvRecord[];
  } catch (error) {
    csvFatal(file, error, problems);
    return null;
  }
  for (const error of skipped) csvSkipped(file, error, problems);
  return records;
}

/** A row csv-parse could not read and skipped, as the problem it is. */
export interface CsvSkip {
  message: string;
  lines?: number;
  index?: number;
}

/** csv-parse's settings, one place for the whole-file and the streamed reader. */
export function csvOptions(onSkip: (error: CsvSkip) => void): CsvParseOptions {
  return {
    bom: true,
    info: true,
    trim: true,
    // Mixed line endings are common in hand-edited files; accept all three.
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (error) => {
      if (error) onSkip(error);
      return undefined;
    },
  };
}

export function csvSkipped(file: string, error: CsvSkip, problems: ProblemList): void {
  const position = { line: error.lines ?? 1, column: (error.index ?? 0) + 1 };
  problems.atDocument(file, `CSV: ${error.message}`, position);
}

/** An error that ends the CSV (an unclosed quote, say), at the line csv-parse names. */
export function csvFatal(file: string, error: unknown, problems: ProblemList): void {
  const { message, lines } = error as { message?: string; lines?: number };
  problems.atDocument(file, `CSV: ${message ?? String(error)}`, { line: lines ?? 1, column: 1 });
}

export interface CsvHeader {
  /** Column count of the header row, which every row must match. */
  width: number;
  /** Usable column names to their index; unnamed, repeated and refused columns are left out. */
  columns: Map<string, number>;
}

/** The header's usable columns, or null when it has no 'prompt' column (then no row can be read). */
export function readHeader(
  file: string,
  head: CsvRecord,
  problems: ProblemList,
  sharedPrompt: boolean,
): CsvHeader | null {
  const headerLine = head.info.lines - lineBreaks(head.record);
  const columns = new Map<string, number>();
  head.record.forEach((name, index) => {
    const at = { line: headerLine, column: index + 1 };
    const column =
      name === '' ? { problem: `column ${index + 1} has no name in the header row` } : headerColumn(name);
    if ('problem' in column) problems.atDocument(file, column.problem, at);
    else if (columns.has(column.key)) {
      const first = head.record[columns.get(column.key)!];
      const message =
        first === name
          ? `column '${name}' appears twice in the header row`
          : `column '${name}' sets the input field '${column.key}', as column '${first}' does`;
      problems.atDocument(file, message, at);
    } else columns.set(column.key, index);
  });
  if (!columns.has('prompt') && !sharedPrompt) {
    const guess = closestMatch(
      'prompt',
      [...columns.keys()].map((c) => c.toLowerCase()),
    );
    const hint = guess === null ? '' : ` (is '${guess}' meant to be 'prompt'?)`;
    problems.atDocument(file, `the header row has no 'prompt' column${hint}`, {
      line: headerLine,
      column: 1,
    });
    return null;
  }
  return { width: head.record.length, columns };
}

function takeRows(
  file: string,
  header: CsvHeader,
  rows: readonly CsvRecord[],
  problems: ProblemList,
  take: (raw: RawItem) => void,
): void {
  let rowIndex = 0;
  for (const row of rows) {
    const raw = rowItem(file, header, row, rowIndex, problems);
    if (raw === undefined) continue;
    rowIndex += 1;
    if (raw !== null) take(raw);
  }
}

/**
 * One row as an item: undefined for a blank row (it takes no index), null for a row with a problem
 * (it does), the item otherwise.
 */
export function rowItem(
  file: string,
  header: CsvHeader,
  { record, info }: CsvRecord,
  rowIndex: number,
  problems: ProblemList,
): RawItem | null | undefined {
  // A row of empty cells is how spreadsheets save a blank line.
  if (record.every((cell) => cell === '')) return undefined;
  const line = info.lines - lineBreaks(record);
  const prefix = ['items_from', rowIndex];
  if (record.length !== header.width) {
    const column = Math.min(record.length, header.width) + 1;
    const message = `this row has ${record.length} fields but the header has ${header.width}`;
    problems.push({ file, line, column, path: formatPath(prefix), message });
    return null;
  }
  const value = rowValue(record, header.columns);
  return { value, source: new CsvSource(file, line, header.columns, prefix) };
}

/**
 * A row as an item: item columns as fields, `vars.NAME` cells as text variables, every other
 * non-empty cell as an input field. An empty cell is absent, so the manifest's value applies.
 */
function rowValue(record: readonly string[], columns: ReadonlyMap<string, number>): Record<string, unknown> {
  const fields: [string, unknown][] = [];
  const inputs: [string, unknown][] = [];
  const vars: [string, unknown][] = [];
  for (const [name, index] of columns) {
    const cell = record[index]!;
    if (cell === '') continue;
    // A count of digits is a number, as `seconds` is; any other cell reaches the schema as text.
    if (name === 'variants' && /^[0-9]+$/.test(cell)) fields.push([name, Number(cell)]);
    else if (ITEM_COLUMNS.has(name)) fields.push([name, cell]);
    else if (name.startsWith(VARS_PREFIX)) vars.push([name.slice(VARS_PREFIX.length), cell]);
    else inputs.push([name, name === 'seconds' && /^[0-9]+$/.test(cell) ? Number(cell) : cell]);
  }
  // fromEntries defines own properties, so a column named like an Object.prototype member stays data.
  if (inputs.length > 0) fields.push(['input', Object.fromEntries(inputs)]);
  if (vars.length > 0) fields.push(['vars', Object.fromEntries(vars)]);
  return Object.fromEntries(fields);
}

/** Classes rather than closures: one of these exists per item, and 100,000 items are normal. */
class CsvSource implements Source {
  constructor(
    readonly file: string,
    private readonly line: number,
    private readonly columns: ReadonlyMap<string, number>,
    readonly prefix: Path,
  ) {}

  position(rel: Path): Position {
    const field =
      rel[0] === 'input' ? rel[1] : rel[0] === 'vars' ? `${VARS_PREFIX}${String(rel[1])}` : rel[0];
    const index = typeof field === 'string' ? this.columns.get(field) : undefined;
    return { line: this.line, column: index === undefined ? 1 : index + 1 };
  }
}
