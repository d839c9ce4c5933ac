/**
 * `JSON.stringify(doc, null, 2)` of a document and a line break, byte for byte, as a series of chunks: each
 * array element is serialised on its own, so a 100,000-item document never exists as one string
 * (docs/performance.md). JSON escapes line breaks inside strings, so every "\n" in an element's
 * text is structure and can be indented.
 */
export function* jsonChunks(doc: Readonly<Record<string, unknown>>, perChunk = 500): Generator<string> {
  const keys = Object.keys(doc).filter((key) => doc[key] !== undefined);
  if (keys.length === 0) {
    yield '{}\n';
    return;
  }
  yield '{\n';
  for (const [n, key] of keys.entries()) {
    const value = doc[key];
    const tail = n === keys.length - 1 ? '\n' : ',\n';
    if (!Array.isArray(value) || value.length === 0) {
      yield `  ${JSON.stringify(key)}: ${indent(JSON.stringify(value, null, 2), '  ')}${tail}`;
      continue;
    }
    yield `  ${JSON.stringify(key)}: [\n`;
    let chunk: string[] = [];
    for (let i = 0; i < value.length; i += 1) {
      chunk.push(`    ${indent(JSON.stringify(value[i], null, 2) ?? 'null', '    ')}`);
      if (chunk.length === perChunk || i === value.length - 1) {
        yield i === value.length - 1 ? chunk.join(',\n') : `${chunk.join(',\n')},\n`;
        chunk = [];
      }
    }
    yield `\n  ]${tail}`;
  }
  yield '}\n';
}

const indent = (text: string, by: string) => text.replaceAll('\n', `\n${by}`);

/** Writes the chunks, waiting whenever the stream's buffer is full, so memory stays flat. */
export async function writeChunks(out: NodeJS.WritableStream, chunks: Iterable<string>): Promise<void> {
  for (const chunk of chunks) {
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
}
