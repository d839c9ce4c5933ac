/**
 * Locating within one JSONL line that JSON.parse has already accepted: where a value path was
 * written (for problem columns), and keys written twice, which JSON.parse resolves silently by
 * keeping the last one while the YAML manifest refuses them. JSON is YAML, so the yaml parser,
 * which keeps every node's position, does the locating. It runs only on lines with a problem:
 * a cheap count tells the clean lines of a 100,000-item file apart first.
 */
import { type Document, parseDocument } from 'yaml';
import { type DuplicateKey, duplicateKeys, offsetOf } from './locate.js';
import type { Path } from './problems.js';

/** The problems of one item are located one after another: its line is parsed once for all. */
let last: { text: string; doc: Document } | null = null;

function jsonDocument(text: string): Document {
  if (last?.text !== text) {
    // uniqueKeys off: duplicateKeys finds them in linear time, the parser's own check is quadratic.
    const doc = parseDocument(text, {
      uniqueKeys: false,
      prettyErrors: false,
      logLevel: 'error',
      strict: true,
    });
    last = { text, doc };
  }
  return last.doc;
}

/**
 * Offset where `path` was written: the key for an object member (the last one, as JSON.parse keeps
 * the last), the start for an array element, else the nearest existing parent.
 */
export function offsetOfPath(text: string, path: Path): number {
  return offsetOf(jsonDocument(text), path, 'key');
}

/**
 * The first key written twice in the same object of `text`, which JSON.parse turned into `value`:
 * the outermost object with a repeated key wins, then the earliest repetition in it.
 */
export function findDuplicateKey(text: string, value: unknown): DuplicateKey | null {
  if (!mayRepeatKeys(text, value)) return null;
  const doc = jsonDocument(text);
  const objectStart = (found: DuplicateKey) => offsetOf(doc, found.path.slice(0, -1), 'value');
  let first: DuplicateKey | null = null;
  for (const found of duplicateKeys(doc)) {
    const order =
      first === null ? -1 : objectStart(found) - objectStart(first) || found.offset - first.offset;
    if (order < 0) first = found;
  }
  return first;
}

/**
 * Whether JSON.parse may have dropped a repeated member. Outside strings every ':' separates a key
 * from its value, so without repeats the line has exactly as many ':' as the parsed value has
 * members plus ':' inside its strings; each dropped member leaves at least one ':' over. An escaped
 * colon (\u003a) breaks that count, so such a line is always looked at.
 */
function mayRepeatKeys(text: string, value: unknown): boolean {
  return /\\u003a/i.test(text) || colons(text) !== membersAndColons(value);
}

function colons(text: string): number {
  let count = 0;
  for (let at = text.indexOf(':'); at !== -1; at = text.indexOf(':', at + 1)) count++;
  return count;
}

/** Iterative, so a deeply nested value cannot overflow the stack. */
function membersAndColons(value: unknown): number {
  let count = 0;
  const stack = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') count += colons(current);
    else if (Array.isArray(current)) for (const element of current) stack.push(element);
    else if (current !== null && typeof current === 'object') {
      const record = current as Record<string, unknown>;
      // for...in: JSON.parse builds plain objects, which inherit no enumerable keys.
      for (const key in record) {
        count += 1 + colons(key);
        stack.push(record[key]);
      }
    }
  }
  return count;
}
