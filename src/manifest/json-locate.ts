/**
 * A tiny scanner over one JSONL line that JSON.parse has already accepted: it finds where a value
 * path was written (for problem columns) and catches duplicate keys, which JSON.parse resolves
 * silently by keeping the last one while the YAML manifest refuses them.
 */
import type { Path, PathSegment } from './problems.js';

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const MAX_SCAN_DEPTH = 64;

function skipSpace(text: string, i: number): number {
  let at = i;
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
    at++;
  }
  return at;
}

/** Index just after the string that opens at `i`. */
function stringEnd(text: string, i: number): number {
  let at = i + 1;
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c === BACKSLASH) at += 2;
    else if (c === QUOTE) return at + 1;
    else at++;
  }
  return at;
}

function keyAt(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : raw;
}

/** Index just after the value that starts at `i` (iterative, so depth does not matter). */
function valueEnd(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return stringEnd(text, i);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    let at = i;
    while (at < text.length) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        at = stringEnd(text, at);
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return at + 1;
      }
      at++;
    }
    return at;
  }
  let at = i;
  while (at < text.length && !',}] \t\r\n'.includes(text[at]!)) at++;
  return at;
}

interface Member {
  key: string;
  keyStart: number;
  valueStart: number;
}

/** Members of the object at `i`, and the index after it. */
function members(text: string, i: number): { list: Member[]; end: number } {
  const list: Member[] = [];
  let at = skipSpace(text, i + 1);
  while (at < text.length && text.charCodeAt(at) === QUOTE) {
    const keyEnd = stringEnd(text, at);
    const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1);
    list.push({ key: keyAt(text, at, keyEnd), keyStart: at, valueStart });
    at = skipSpace(text, valueEnd(text, valueStart));
    if (text[at] === ',') at = skipSpace(text, at + 1);
  }
  return { list, end: at + 1 };
}

/** Starts of the elements of the array at `i`, and the index after it. */
function elements(text: string, i: number): { list: number[]; end: number } {
  const list: number[] = [];
  let at = skipSpace(text, i + 1);
  while (at < text.length && text[at] !== ']') {
    list.push(at);
    at = skipSpace(text, valueEnd(text, at));
    if (text[at] === ',') at = skipSpace(text, at + 1);
  }
  return { list, end: at + 1 };
}

/**
 * Offset where `path` was written: the key for an object member (the last one, as JSON.parse keeps
 * the last), the start for an array element, else the nearest existing parent.
 */
export function offsetOfPath(text: string, path: Path): number {
  let at = skipSpace(text, 0);
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    const first = text.charCodeAt(at);
    if (first === OPEN_BRACE && typeof segment === 'string') {
      const member = members(text, at).list.findLast((m) => m.key === segment);
      if (!member) return at;
      if (i === path.length - 1) return member.keyStart;
      at = member.valueStart;
    } else if (first === OPEN_BRACKET && typeof segment === 'number') {
      const start = elements(text, at).list[segment];
      if (start === undefined) return at;
      at = start;
    } else {
      return at;
    }
  }
  return at;
}

export interface DuplicateKey {
  offset: number;
  path: PathSegment[];
}

/** Members written in the text: every ':' outside a string separates a key from its value. */
function writtenMembers(text: string): number {
  let count = 0;
  for (let at = 0; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (c === QUOTE) at = stringEnd(text, at) - 1;
    else if (c === 58) count++;
  }
  return count;
}

/** Members that survived JSON.parse; fewer than were written means a key was repeated. */
function parsedMembers(value: unknown): number {
  let count = 0;
  if (value === null || typeof value !== 'object') return 0;
  const stack = [value];
  while (stack.length > 0) {
    const current = stack.pop() as Record<string, unknown>;
    const isArray = Array.isArray(current);
    for (const key in current) {
      if (!isArray) count++;
      const child = current[key];
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return count;
}

/**
 * The first key written twice in the same object of `text`, which JSON.parse turned into `value`.
 * Counting first keeps the common case (no duplicates) to one pass without allocations.
 */
export function findDuplicateKey(text: string, value: unknown): DuplicateKey | null {
  if (writtenMembers(text) === parsedMembers(value)) return null;
  return locateDuplicateKey(text);
}

function locateDuplicateKey(text: string): DuplicateKey | null {
  const stack: { at: number; path: PathSegment[] }[] = [{ at: skipSpace(text, 0), path: [] }];
  while (stack.length > 0) {
    const { at, path } = stack.pop()!;
    if (path.length > MAX_SCAN_DEPTH) continue;
    const first = text.charCodeAt(at);
    if (first === OPEN_BRACE) {
      const list = members(text, at).list;
      const seen = new Set<string>();
      for (const member of list) {
        if (seen.has(member.key)) return { offset: member.keyStart, path: [...path, member.key] };
        seen.add(member.key);
      }
      for (let i = list.length - 1; i >= 0; i--) {
        stack.push({ at: list[i]!.valueStart, path: [...path, list[i]!.key] });
      }
    } else if (first === OPEN_BRACKET) {
      const list = elements(text, at).list;
      for (let i = list.length - 1; i >= 0; i--) stack.push({ at: list[i]!, path: [...path, i] });
    }
  }
  return null;
}
