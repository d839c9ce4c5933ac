/**
 * A file's bytes as strict UTF-8 text, a chunk at a time: the streamed `items_from` reader refuses
 * a bad byte as the whole-file reader does (load.ts), at the same line and column, without ever
 * holding more than a chunk and the current line's start.
 */
import { invalidUtf8Offset } from './load.js';
import type { Position } from './problems.js';

// The file's first bytes are decoded dropping a BOM, as the whole-file reader's decoder does;
// later chunks keep one, since U+FEFF there is text.
const dropsBom = new TextDecoder('utf-8', { fatal: true });
const keepsBom = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Thrown where the bytes stop being UTF-8; `position` counts as the whole-file reader does. */
export class InvalidUtf8Error extends Error {
  constructor(readonly position: Position) {
    super('not valid UTF-8 text');
  }
}

/** How many bytes at the end of `bytes` start a sequence that the next chunk may complete. */
function openTail(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

export async function* strictUtf8Text(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  let carry: Uint8Array = new Uint8Array(0);
  // Lines before this chunk, and the text of the line the chunk starts in (for a column).
  let line = 1;
  let lineText = '';
  let first = true;
  const take = (bytes: Uint8Array): string => {
    const bad = invalidUtf8Offset(bytes);
    if (bad >= 0) {
      const before = lineText + (first ? dropsBom : keepsBom).decode(bytes.subarray(0, bad));
      const lineStart = before.lastIndexOf('\n') + 1;
      throw new InvalidUtf8Error({
        line: line + (before.split('\n').length - 1),
        column: before.length - lineStart + 1,
      });
    }
    const text = (first ? dropsBom : keepsBom).decode(bytes);
    if (bytes.length > 0) first = false;
    const lastBreak = text.lastIndexOf('\n');
    if (lastBreak < 0) lineText += text;
    else {
      for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) line += 1;
      lineText = text.slice(lastBreak + 1);
    }
    return text;
  };
  for await (const chunk of chunks) {
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const open = openTail(bytes);
    carry = bytes.slice(bytes.length - open);
    const text = take(bytes.subarray(0, bytes.length - open));
    if (text !== '') yield text;
  }
  if (carry.length > 0) take(carry);
}
