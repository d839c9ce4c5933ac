import type { ManifestProblem } from '../errors.js';
/**
 * Problems are the only way user input fails: every check collects them instead of throwing, so a
 * user sees all of their mistakes in one run, each pointing at a file, line and column.
 */

export type PathSegment = string | number;
export type Path = readonly PathSegment[];

/** Whether a problem about a map entry points at its key (unknown or reserved keys) or its value. */
export type Anchor = 'key' | 'value';

export interface Position {
  line: number;
  column: number;
}

/**
 * Where a value was written: the manifest itself, a CSV row, or a JSONL line. Positions are only
 * computed when a problem is reported, which keeps the happy path of large item files cheap.
 */
export interface Source {
  readonly file: string;
  /** Path of this source's root value, for display (`items[3]`, `items_from[7]`, `input`...). */
  readonly prefix: Path;
  position(rel: Path, anchor: Anchor): Position;
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function formatPath(path: Path): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Collects problems, dropping exact duplicates (a shared default can be reached from many items). */
export class ProblemList {
  private readonly seen = new Set<string>();
  private readonly list: ManifestProblem[] = [];

  get size(): number {
    return this.list.length;
  }

  push(problem: ManifestProblem): void {
    const key = `${problem.file}\0${problem.line}\0${problem.column}\0${problem.path}\0${problem.message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.list.push(problem);
  }

  at(source: Source, rel: Path, message: string, anchor: Anchor = 'value'): void {
    const { line, column } = source.position(rel, anchor);
    this.push({ file: source.file, line, column, path: formatPath([...source.prefix, ...rel]), message });
  }

  /** Whole-document problem of a file (syntax, emptiness, unreadable). */
  atDocument(file: string, message: string, position: Position = { line: 1, column: 1 }): void {
    this.push({ file, line: position.line, column: position.column, path: '', message });
  }

  /** The problems in the order they were found. */
  entries(): readonly ManifestProblem[] {
    return this.list;
  }

  /** Files in order of first mention (the manifest first), then by position, so output reads top-down. */
  sorted(): ManifestProblem[] {
    const fileOrder = new Map<string, number>();
    for (const p of this.list) if (!fileOrder.has(p.file)) fileOrder.set(p.file, fileOrder.size);
    return this.list
      .map((p, index) => ({ p, index }))
      .sort(
        (a, b) =>
          fileOrder.get(a.p.file)! - fileOrder.get(b.p.file)! ||
          a.p.line - b.p.line ||
          a.p.column - b.p.column ||
          a.index - b.index,
      )
      .map(({ p }) => p);
  }
}

/** A user value's kind in words, for "must be X, not Y" messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null (an empty value)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `the ${typeof value} ${show(value)}`;
}

/** Short rendering of a user value inside a message (never a whole document). */
export function show(value: unknown): string {
  let text: string;
  try {
    text =
      value === undefined
        ? 'nothing'
        : typeof value === 'number'
          ? String(value)
          : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
