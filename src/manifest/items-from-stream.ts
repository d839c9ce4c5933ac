/**
 * `items_from` read a line at a time: readline for JSON Lines, csv-parse's stream for CSV, each
 * line through the same rules as the whole-file reader (items-from.ts, csv-items.ts), so an item
 * and a problem come out the same, at the same file, line, column and field. Only the current
 * chunk and the item being handed on are held, whatever the file's size.
 */
import { createReadStream } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import {
  type CsvHeader,
  type CsvRecord,
  type CsvSkip,
  csvFatal,
  csvOptions,
  csvSkipped,
  readHeader,
  rowItem,
} from './csv-items.js';
import { jsonlItem } from './items-from.js';
import { describeReadError } from './load.js';
import type { ProblemList, Source } from './problems.js';
import type { RawItem } from './raw-item.js';
import { InvalidUtf8Error, strictUtf8Text } from './utf8-stream.js';

/** What a streamed read learnt besides its items: whether the file itself failed (as readItemsFrom returns). */
export interface StreamedRead {
  failed: boolean;
}

/** Raw items handed on together: an async generator's step per item was a tenth of a read. */
const BATCH = 500;

/**
 * The items of `relPath` (beside `manifestFile`), a few hundred at a time, in file order. A file
 * that cannot be read, or stops being UTF-8, is reported at the manifest's `items_from` as the
 * whole-file reader reports it; the lines before a bad byte have been read by then, and their
 * problems stand beside it.
 */
export async function* streamItemsFrom(
  relPath: string,
  manifestFile: string,
  manifest: Source,
  problems: ProblemList,
  read: StreamedRead,
  sharedPrompt = false,
): AsyncGenerator<RawItem[]> {
  const file = isAbsolute(relPath) ? relPath : join(dirname(manifestFile), relPath);
  const before = problems.size;
  const text = strictUtf8Text(createReadStream(file));
  try {
    if (/\.csv$/i.test(relPath)) yield* csvStream(file, text, problems, sharedPrompt);
    else yield* jsonlStream(file, text, problems);
  } catch (error) {
    const why =
      error instanceof InvalidUtf8Error
        ? `${error.message} (bad byte at line ${error.position.line}, column ${error.position.column})`
        : describeReadError(error);
    problems.at(manifest, ['items_from'], `cannot read '${relPath}': ${why}`);
  }
  if (problems.size > before) read.failed = true;
}

async function* jsonlStream(
  file: string,
  text: AsyncIterable<string>,
  problems: ProblemList,
): AsyncGenerator<RawItem[]> {
  // crlfDelay Infinity: a \r\n split across two chunks is still one break, as in the whole file.
  const lines = createInterface({ input: Readable.from(text), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  let index = 0;
  let batch: RawItem[] = [];
  try {
    for await (const read of lines) {
      line += 1;
      const lineText = line === 1 && read.charCodeAt(0) === 0xfeff ? read.slice(1) : read;
      if (lineText.trim() === '') continue;
      const raw = jsonlItem(file, line, lineText, index++, problems);
      if (raw === null) continue;
      batch.push(raw);
      if (batch.length < BATCH) continue;
      yield batch;
      batch = [];
    }
  } catch (error) {
    // The lines before a bad byte are items as the whole reader gives them (the caller reports the byte).
    if (batch.length > 0) yield batch;
    throw error;
  }
  if (batch.length > 0) yield batch;
}

async function* csvStream(
  file: string,
  text: AsyncIterable<string>,
  problems: ProblemList,
  sharedPrompt: boolean,
): AsyncGenerator<RawItem[]> {
  const skipped: CsvSkip[] = [];
  const records = Readable.from(text).pipe(parseCsv(csvOptions((error) => skipped.push(error))));
  let header: CsvHeader | null | undefined;
  let rowIndex = 0;
  let batch: RawItem[] = [];
  try {
    for await (const record of records as AsyncIterable<CsvRecord>) {
      for (const error of skipped.splice(0)) csvSkipped(file, error, problems);
      if (header === undefined) {
        header = readHeader(file, record, problems, sharedPrompt);
        if (header === null) return;
        continue;
      }
      const raw = rowItem(file, header as CsvHeader, record, rowIndex, problems);
      if (raw === undefined) continue;
      rowIndex += 1;
      if (raw === null) continue;
      batch.push(raw);
      if (batch.length < BATCH) continue;
      yield batch;
      batch = [];
    }
  } catch (error) {
    // The rows before a bad one are items as the whole reader gives them, with their own problems.
    if (batch.length > 0) yield batch;
    batch = [];
    // A read error or a bad byte is the file's, not the CSV's: the caller reports it.
    if (!String((error as { code?: unknown }).code ?? '').startsWith('CSV_')) throw error;
    csvFatal(file, error, problems);
    return;
  } finally {
    records.destroy();
  }
  if (batch.length > 0) yield batch;
  for (const error of skipped) csvSkipped(file, error, problems);
  if (header === undefined)
    problems.atDocument(file, 'the CSV file is empty: expected a header row such as "id,prompt"');
}
