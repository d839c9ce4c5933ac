/**
 * Reads `items_from` files into raw item values, each with a source that can point back at a CSV
 * cell or a JSONL line. Validation of the items themselves is shared with the manifest's `items`.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { isPlainObject } from '../plain-object.js';
import { closestMatch } from '../suggest.js';
import { headerColumn, ITEM_COLUMNS, VARS_PREFIX } from './csv-columns.js';
import { findDuplicateKey, offsetOfPath } from './json-locate.js';
import { formatPath, type Path, type Position, type ProblemList, type Source } from './problems.js';

export interface RawItem {
  value: unknown;
  source: Source;
}

export type SiblingReader = (
  relPath: string,
) => { file: string; text: string } | { file: string; error: string };

/**
 * Hands each item of the file to `take` as it is read, so that a 100,000-line file's parsed values
 * can be let go one by one instead of living until the last line (most of loading's garbage
 * collection was copying them). Returns true when the file itself failed, so that "no items" would
 * only repeat the real problem.
 */
export function readItemsFrom(
  relPath: string,
  manifest: Source,
  readSibling: SiblingReader,
  problems: ProblemList,
  take: (raw: RawItem) => void,
  /** The manifest has a prompt of its own, so a CSV may leave out the 'prompt' column. */
  sharedPrompt = false,
): boolean {
  let read: ReturnType<SiblingReader>;
  try {
    read = readSibling(relPath);
  } catch (error) {
    read = { file: relPath, error: error instanceof Error ? error.message : String(error) };
  }
  if ('error' in read) {
    problems.at(manifest, ['items_from'], `cannot read '${relPath}': ${read.error}`);
    return true;
  }
  const before = problems.size;
  if (/\.csv$/i.test(relPath)) csvItems(read.file, read.text, problems, take, sharedPrompt);
  else jsonlItems(read.file, read.text, problems, take);
  return problems.size > before;
}

interface CsvRecord {
  record: string[];
  info: { lines: number };
}

function lineBreaks(cells: readonly string[]): number {
  let count = 0;
  for (const cell of cells) count += cell.match(/\r\n|\r|\n/g)?.length ?? 0;
  return count;
}

function csvItems(
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
  const skipped: { message: string; lines?: number; index?: number }[] = [];
  let records: CsvRecord[];
  try {
    records = parseCsv(text, {
      bom: true,
      info: true,
      trim: true,
      // Mixed line endings are common in hand-edited files; accept all three.
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      on_skip: (error) => {
        if (error) skipped.push(error);
      },
    }) as unknown as CsvRecord[];
  } catch (error) {
    const { message, lines } = error as { message?: string; lines?: number };
    problems.atDocument(file, `CSV: ${message ?? String(error)}`, { line: lines ?? 1, column: 1 });
    return null;
  }
  for (const error of skipped) {
    const position = { line: error.lines ?? 1, column: (error.index ?? 0) + 1 };
    problems.atDocument(file, `CSV: ${error.message}`, position);
  }
  return records;
}

interface CsvHeader {
  /** Column count of the header row, which every row must match. */
  width: number;
  /** Usable column names to their index; unnamed, repeated and refused columns are left out. */
  columns: Map<string, number>;
}

/** The header's usable columns, or null when it has no 'prompt' column (then no row can be read). */
function readHeader(
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
  for (const { record, info } of rows) {
    // A row of empty cells is how spreadsheets save a blank line.
    if (record.every((cell) => cell === '')) continue;
    const line = info.lines - lineBreaks(record);
    const prefix = ['items_from', rowIndex++];
    if (record.length !== header.width) {
      const column = Math.min(record.length, header.width) + 1;
      const message = `this row has ${record.length} fields but the header has ${header.width}`;
      problems.push({ file, line, column, path: formatPath(prefix), message });
      continue;
    }
    const value = rowValue(record, header.columns);
    take({ value, source: new CsvSource(file, line, header.columns, prefix) });
  }
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

/** Line breaks as the JSONL reader splits them: \r\n, \n or \r. */
const LINE_BREAK = /\r\n|\n|\r/g;

function jsonlItems(file: string, text: string, problems: ProblemList, take: (raw: RawItem) => void): void {
  let index = 0;
  let line = 0;
  // Offsets, not a split: the line's text is needed again only to locate a problem.
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  LINE_BREAK.lastIndex = start;
  while (start <= text.length) {
    const found = LINE_BREAK.exec(text);
    const end = found ? found.index : text.length;
    const next = found ? found.index + found[0].length : text.length + 1;
    line += 1;
    const lineText = text.slice(start, end);
    const lineStart = start;
    start = next;
    if (lineText.trim() === '') continue;
    const itemIndex = index++;
    let value: unknown;
    try {
      value = JSON.parse(lineText);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const offset = /at position (\d+)/.exec(message)?.[1];
      const detail = message.replace(/\s*in JSON at position \d+.*$/s, '');
      const column = offset === undefined ? 1 : Number(offset) + 1;
      const path = formatPath(['items_from', itemIndex]);
      problems.push({ file, line, column, path, message: `invalid JSON: ${detail}` });
      continue;
    }
    const source = new JsonlSource(file, line, text, lineStart, end, itemIndex);
    if (!isPlainObject(value)) {
      problems.at(source, [], 'each line must be a JSON object describing one item');
      continue;
    }
    const duplicate = findDuplicateKey(lineText, value);
    if (duplicate) {
      const key = String(duplicate.path[duplicate.path.length - 1]);
      problems.push({
        file,
        line,
        column: duplicate.offset + 1,
        path: formatPath([...source.prefix, ...duplicate.path]),
        message: `duplicate key '${key}' (each key may appear once in an object)`,
      });
    }
    take({ value, source });
  }
}

/** Keeps the file's text and the line's offsets rather than a copy of each of 100,000 lines. */
class JsonlSource implements Source {
  constructor(
    readonly file: string,
    private readonly line: number,
    private readonly text: string,
    private readonly start: number,
    private readonly end: number,
    private readonly index: number,
  ) {}

  get prefix(): Path {
    return ['items_from', this.index];
  }

  position(rel: Path): Position {
    return { line: this.line, column: offsetOfPath(this.text.slice(this.start, this.end), rel) + 1 };
  }
}
