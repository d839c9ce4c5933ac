/**
 * Turns manifest text into data plus the YAML document kept for locating later problems. Syntax
 * errors end the reading; duplicate keys do not, because the rest of the document is still sound
 * and the user deserves to see their other mistakes too.
 */
import { type Document, isAlias, LineCounter, parseDocument, visit } from 'yaml';
import type { ManifestProblem } from '../errors.js';
import { duplicateKeys, pathAtOffset, toPosition } from './locate.js';
import { formatPath, type Path, type Position, type ProblemList } from './problems.js';

export interface YamlRead {
  doc: Document;
  lineCounter: LineCounter;
  /** Undefined when the text could not be read as data. */
  value: unknown;
}

/** Aliases can multiply a small text into a huge value; no real manifest needs more than this. */
const MAX_ALIAS_COUNT = 100;

/** What every step of reading reports against. */
interface Reading {
  file: string;
  doc: Document;
  lineCounter: LineCounter;
  problems: ProblemList;
}

export function readYaml(file: string, text: string, problems: ProblemList): YamlRead {
  const lineCounter = new LineCounter();
  const doc = parseYaml(text, lineCounter);
  const reading = { file, doc, lineCounter, problems };
  const fatal = reportErrors(reading);
  reportDuplicateKeys(reading);
  reportWarnings(reading);
  return { doc, lineCounter, value: fatal ? undefined : toData(reading) };
}

function parseYaml(text: string, lineCounter: LineCounter): Document {
  return parseDocument(text, {
    lineCounter,
    // The parser's own check compares each key with every earlier one: a 10 MB map would take
    // hours. duplicateKeys does the same check in one pass.
    uniqueKeys: false,
    prettyErrors: false,
    // 'error': keeps every problem in doc.errors/warnings without printing to the console.
    logLevel: 'error',
    strict: true,
    version: '1.2',
    // `<<: *defaults` is how people share settings between items; YAML 1.2 only has it as an option.
    merge: true,
  });
}

/** Reports the parser's errors; true when one of them means the text cannot be read as data. */
function reportErrors({ file, doc, lineCounter, problems }: Reading): boolean {
  let fatal = false;
  for (const error of doc.errors) {
    const position = toPosition(lineCounter, error.pos[0]);
    if (error.code === 'DUPLICATE_KEY') {
      problems.push(duplicateKeyProblem(file, position, pathAtOffset(doc, error.pos[0])));
    } else {
      fatal = true;
      const message =
        error.code === 'MULTIPLE_DOCS'
          ? "the file holds more than one YAML document ('---'); a manifest is a single document"
          : error.message;
      problems.atDocument(file, `YAML: ${message}`, position);
    }
  }
  return fatal;
}

function reportDuplicateKeys({ file, doc, lineCounter, problems }: Reading): void {
  for (const duplicate of duplicateKeys(doc)) {
    problems.push(duplicateKeyProblem(file, toPosition(lineCounter, duplicate.offset), duplicate.path));
  }
}

function duplicateKeyProblem(file: string, position: Position, path: Path): ManifestProblem {
  const key = path.at(-1);
  const named = key === undefined ? '' : `'${String(key)}' `;
  return {
    file,
    ...position,
    path: formatPath(path),
    message: `duplicate key ${named}(each key may appear once in a map)`,
  };
}

/** Warnings (unresolved tags and the like) mean the text does not say what the user thinks it says. */
function reportWarnings({ file, doc, lineCounter, problems }: Reading): void {
  for (const warning of doc.warnings) {
    const position = toPosition(lineCounter, warning.pos[0]);
    problems.push({
      file,
      ...position,
      path: formatPath(pathAtOffset(doc, warning.pos[0])),
      message: `YAML: ${warning.message}`,
    });
  }
}

/** The document as data, or undefined after reporting why not (too many or broken aliases). */
function toData({ file, doc, lineCounter, problems }: Reading): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    problems.atDocument(file, `YAML: ${message}`, toPosition(lineCounter, brokenAliasOffset(doc)));
    return undefined;
  }
}

/** Where data conversion most likely failed: the first alias that does not resolve, else the top. */
function brokenAliasOffset(doc: Document): number {
  let offset = 0;
  try {
    visit(doc, {
      Alias(_, node) {
        if (isAlias(node) && node.resolve(doc) === undefined && node.range) {
          offset = node.range[0];
          return visit.BREAK;
        }
        return undefined;
      },
    });
  } catch {
    // Locating is best effort; the problem itself is already certain.
  }
  return offset;
}
