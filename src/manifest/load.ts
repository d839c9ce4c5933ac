/**
 * loadManifest: the only part of the module that touches the disk. Unreadable files and invalid
 * UTF-8 become problems with a position, like every other mistake.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { ManifestProblem } from '../errors.js';
import type { SiblingReader } from './items-from.js';
import { parseManifest } from './parse.js';
import type { Position } from './problems.js';
import type { ManifestResult } from './types.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Byte offset of the first byte that is not part of well-formed UTF-8, or -1. */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let min = 0x80;
    let max = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) min = 0xa0; // overlong
      if (lead === 0xed) max = 0x9f; // surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) min = 0x90; // overlong
      if (lead === 0xf4) max = 0x8f; // above U+10FFFF
    } else return i;
    if (i + length > bytes.length) return i;
    const second = bytes[i + 1]!;
    if (second < min || second > max) return i;
    for (let k = 2; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  return -1;
}

type Decoded = { text: string } | { error: string; position: Position };

export function decodeUtf8(bytes: Uint8Array): Decoded {
  try {
    return { text: strictUtf8.decode(bytes) };
  } catch {
    const offset = Math.max(0, invalidUtf8Offset(bytes));
    const before = strictUtf8.decode(bytes.subarray(0, offset));
    const lineStart = before.lastIndexOf('\n') + 1;
    const position = { line: before.split('\n').length, column: before.length - lineStart + 1 };
    return { error: 'not valid UTF-8 text', position };
  }
}

export function describeReadError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'file not found';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  return error instanceof Error ? error.message : String(error);
}

function readText(file: string): Decoded | { error: string; position?: undefined } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    return { error: describeReadError(error) };
  }
  return decodeUtf8(bytes);
}

export function loadManifest(file: string): ManifestResult {
  const read = readManifestText(file);
  return 'text' in read ? loadManifestText(file, read.text) : read;
}

/** The manifest's own text, or why it cannot be read as a problem at its first line (or bad byte). */
export function readManifestText(
  file: string,
): { text: string } | { ok: false; problems: ManifestProblem[] } {
  const read = readText(file);
  if (!('error' in read)) return read;
  const { line, column } = read.position ?? { line: 1, column: 1 };
  const message = read.position ? `the manifest is ${read.error}` : `cannot read the manifest: ${read.error}`;
  return { ok: false, problems: [{ file, line, column, path: '', message }] };
}

/** A manifest given as text, as if it were the file `file`: `items_from` and the like read beside it. */
export function loadManifestText(file: string, text: string): ManifestResult {
  const readSibling: SiblingReader = (relPath) => {
    const sibling = isAbsolute(relPath) ? relPath : join(dirname(file), relPath);
    const result = readText(sibling);
    if (!('error' in result)) return { file: sibling, text: result.text };
    const at = result.position
      ? ` (bad byte at line ${result.position.line}, column ${result.position.column})`
      : '';
    return { file: sibling, error: `${result.error}${at}` };
  };
  return parseManifest(file, text, readSibling);
}
