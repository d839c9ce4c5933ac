/**
 * Reads `items_from` files into raw item values, each with a source that can point back at a CSV
 * cell or a JSONL line. Validation of the items themselves is shared with the manifest's `items`.
 */
import { isPlainObject } from '../plain-object.js';
import { csvItems } from './csv-items.js';
import { findDuplicateKey, offsetOfPath } from './json-locate.js';
import { formatPath, type Path, type Position, type ProblemList, type Source } from './problems.js';
import type { RawItem } from './raw-item.js';

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

/** Line breaks as the JSONL reader splits them: \r\n, \n or \r (readline splits the same way). */
const LINE_BREAK = /\r\n|\n|\r/g;

function jsonlItems(file: string, text: string, problems: ProblemList, take: (raw: RawItem) => void): void {
  let index = 0;
  let line = 0;
  // Offsets, not a split: a line is sliced once, and only a line with an item is kept (by its source).
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  LINE_BREAK.lastIndex = start;
  while (start <= text.length) {
    const found = LINE_BREAK.exec(text);
    const end = found ? found.index : text.length;
    line += 1;
    const lineText = text.slice(start, end);
    start = found ? found.index + found[0].length : text.length + 1;
    if (lineText.trim() === '') continue;
    const raw = jsonlItem(file, line, lineText, index++, problems);
    if (raw !== null) take(raw);
  }
}

/** One non-blank line of a JSONL file as an item, or null after reporting why it is not one. */
export function jsonlItem(
  file: string,
  line: number,
  lineText: string,
  itemIndex: number,
  problems: ProblemList,
): RawItem | null {
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
    return null;
  }
  const source = new JsonlSource(file, line, lineText, itemIndex);
  if (!isPlainObject(value)) {
    problems.at(source, [], 'each line must be a JSON object describing one item');
    return null;
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
  return { value, source };
}

/**
 * Keeps its line's text (a slice of the file's text, or the line readline gave) to locate a
 * problem; it lives only as long as its item does.
 */
class JsonlSource implements Source {
  constructor(
    readonly file: string,
    private readonly line: number,
    private readonly text: string,
    private readonly index: number,
  ) {}

  get prefix(): Path {
    return ['items_from', this.index];
  }

  position(rel: Path): Position {
    // The item itself starts at its first character that is not blank: no parse needed to say so.
    if (rel.length === 0)
      return { line: this.line, column: this.text.length - this.text.trimStart().length + 1 };
    return { line: this.line, column: offsetOfPath(this.text, rel) + 1 };
  }
}
