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
    } else if (isIterable(value)) {
      // Items read back as they are written (a streamed plan's or status's, spooled-items.ts).
      yield* iteratedArray(`  ${JSON.stringify(key)}: `, value, perChunk);
      yield tail;
    } else {
      // JSON escapes line breaks inside strings, so every one in the text is structure to indent.
      yield `  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replaceAll('\n', '\n  ')}${tail}`;
    }
  }
  yield '}\n';
}

/** An iterable that is not an array or a string: written as the array of what it gives. */
const isIterable = (value: unknown): value is Iterable<unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Symbol.iterator in value;

/** An iterable's elements as an array member, `perChunk` at a time: as JSON.stringify writes the array. */
function* iteratedArray(head: string, values: Iterable<unknown>, perChunk: number): Generator<string> {
  const array = new ArrayChunks(head, perChunk);
  for (const value of values) {
    const chunk = array.add(value);
    if (chunk !== null) yield chunk;
  }
  yield array.end();
}

/** An array member's text, a slice of elements at a time as they come. */
class ArrayChunks {
  #slice: unknown[] = [];
  #first = true;

  constructor(
    private readonly head: string,
    private readonly perChunk: number,
  ) {}

  /** The slice's text once it is full; null until then. */
  add(value: unknown): string | null {
    this.#slice.push(value);
    return this.#slice.length < this.perChunk ? null : this.#flush();
  }

  /** What is left, and the array's end. */
  end(): string {
    const rest = this.#slice.length > 0 ? this.#flush() : '';
    return `${rest}${this.#first ? `${this.head}[]` : '\n  ]'}`;
  }

  #flush(): string {
    const text = `${this.#first ? `${this.head}[\n` : ',\n'}${elements(this.#slice)}`;
    this.#first = false;
    this.#slice = [];
    return text;
  }
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

/** A member whose value is known only once the members before it are written (totals after items). */
export class Later {
  constructor(readonly value: () => unknown | Promise<unknown>) {}
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/**
 * jsonChunks for a document written as it is read: a member that is an async iterable is written
 * as an array, `perChunk` elements at a time as they arrive, and a `Later` member is asked for its
 * value only when its turn comes. Byte for byte `JSON.stringify` of the document with every
 * iterable collected and every `Later` resolved, and a line break (test/documents/json-chunks.test.ts).
 */
export async function* jsonStream(document: object, perChunk = 1000): AsyncGenerator<string> {
  const doc = document as Readonly<Record<string, unknown>>;
  // Separators go before a member, not after: whether another member follows may not be known yet.
  let opened = false;
  const open = (key: string) => {
    const head = `${opened ? ',\n' : '{\n'}  ${JSON.stringify(key)}: `;
    opened = true;
    return head;
  };
  for (const key of Object.keys(doc)) {
    const member = doc[key];
    const value = member instanceof Later ? await member.value() : member;
    if (isAsyncIterable(value)) yield* streamedArray(open(key), value, perChunk);
    else if (written(value))
      yield Array.isArray(value) && value.length > perChunk
        ? slicedArray(open(key), value, perChunk).join('')
        : `${open(key)}${JSON.stringify(value, null, 2).replaceAll('\n', '\n  ')}`;
  }
  yield opened ? '\n}\n' : '{}\n';
}

function slicedArray(head: string, value: readonly unknown[], perChunk: number): string[] {
  const parts = [`${head}[\n`];
  for (let start = 0; start < value.length; start += perChunk)
    parts.push(`${start === 0 ? '' : ',\n'}${elements(value.slice(start, start + perChunk))}`);
  parts.push('\n  ]');
  return parts;
}

async function* streamedArray(
  head: string,
  values: AsyncIterable<unknown>,
  perChunk: number,
): AsyncGenerator<string> {
  const array = new ArrayChunks(head, perChunk);
  for await (const value of values) {
    const chunk = array.add(value);
    if (chunk !== null) yield chunk;
  }
  yield array.end();
}
