/**
 * `JSON.stringify(doc, null, 2)` and a line break, byte for byte, as a series of chunks, so that a
 * 100,000-item document is never one 25 MB string and its copy as bytes (docs/performance.md).
 * Each long array is written a slice at a time; every piece is still JSON.stringify's own work.
 * For plain documents only (no toJSON, no replacer).
 */
export function* jsonChunks(document: object, perChunk = 1000): Generator<string> {
  const doc = document as Readonly<Record<string, unknown>>;
  const members = Object.keys(doc).filter((key) => written(doc[key]));
  if (members.length === 0) {
    yield '{}\n';
    return;
  }
  yield '{\n';
  for (const [n, key] of members.entries()) {
    const value = doc[key];
    const tail = n === members.length - 1 ? '\n' : ',\n';
    if (Array.isArray(value) && value.length > perChunk) {
      yield `  ${JSON.stringify(key)}: [\n`;
      for (let start = 0; start < value.length; start += perChunk) {
        const last = start + perChunk >= value.length;
        yield `${elements(value.slice(start, start + perChunk))}${last ? '\n' : ',\n'}`;
      }
      yield `  ]${tail}`;
    } else {
      // JSON escapes line breaks inside strings, so every one in the text is structure to indent.
      yield `  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replaceAll('\n', '\n  ')}${tail}`;
    }
  }
  yield '}\n';
}

/** JSON.stringify leaves out a member whose value is one of these. */
const written = (value: unknown) =>
  value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';

const OPEN = '{\n  "x": [\n';
const CLOSE = '\n  ]\n}';

/** A slice's elements as they sit inside a top-level array member: indented four, comma-separated. */
function elements(slice: readonly unknown[]): string {
  const text = JSON.stringify({ x: slice }, null, 2);
  return text.slice(OPEN.length, text.length - CLOSE.length);
}
