/**
 * Input and metadata pass through to the service as JSON, so anything YAML can express but JSON
 * cannot (.inf, .nan) must be refused here rather than silently turned into null on the wire.
 */
import { isPlainObject } from '../plain-object.js';
import type { PathSegment } from './problems.js';

/** Deeper values are refused: nothing legitimate nests this far, and it keeps later walks bounded. */
export const MAX_DEPTH = 32;

export interface JsonValueIssue {
  path: PathSegment[];
  message: string;
}

function scalarIssue(value: unknown): string | null {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : `${value} is not a JSON number`;
  return `a ${typeof value} is not a JSON value`;
}

interface Pending {
  value: object;
  key: PathSegment | null;
  parent: Pending | null;
  depth: number;
}

function pathOf(entry: Pending | null, last?: PathSegment): PathSegment[] {
  const path: PathSegment[] = last === undefined ? [] : [last];
  for (let at = entry; at !== null && at.key !== null; at = at.parent) path.unshift(at.key);
  return path;
}

/**
 * The first place where `value` is not a JSON value, or null. Iterative, so depth cannot overflow,
 * and scalars are checked in place: this runs on every entry of every item.
 */
export function jsonValueIssue(value: unknown): JsonValueIssue | null {
  if (value === null || typeof value !== 'object') {
    const message = scalarIssue(value);
    return message === null ? null : { path: [], message };
  }
  const stack: Pending[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const current = entry.value;
    if (!Array.isArray(current) && !isPlainObject(current)) {
      return {
        path: pathOf(entry),
        message: `a ${current.constructor?.name ?? 'object'} is not a JSON value`,
      };
    }
    if (entry.depth >= MAX_DEPTH) {
      return { path: pathOf(entry), message: `value is nested more than ${MAX_DEPTH} levels deep` };
    }
    const record = current as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = record[key];
      const segment = Array.isArray(current) ? Number(key) : key;
      if (child !== null && typeof child === 'object') {
        stack.push({ value: child, key: segment, parent: entry, depth: entry.depth + 1 });
      } else {
        const message = scalarIssue(child);
        if (message !== null) return { path: pathOf(entry, segment), message };
      }
    }
  }
  return null;
}
