/**
 * Turns zod issues into located problems: one problem per unknown key (pointing at the key, with a
 * guess at what was meant), missing keys at their parent map, everything else at the bad value.
 */
import type { z } from 'zod';
import { isPlainObject } from '../plain-object.js';
import { closestMatch } from '../suggest.js';
import { CHECKED_INPUT_FIELDS } from './input-fields.js';
import { optionFieldHint } from './option-fields.js';
import type { Anchor, Path, PathSegment, ProblemList, Source } from './problems.js';
import { ITEM_KEYS, NOTIFY_KEYS, OUTPUT_KEYS, TOP_KEYS } from './schema.js';

/** Which strict object a zod path points into, to suggest keys from the right list. */
export type KeysAt = (path: Path) => readonly string[];

/** The keys of each strict map inside the manifest's top level. */
const NESTED_KEYS: Readonly<Record<string, readonly string[]>> = { output: OUTPUT_KEYS, notify: NOTIFY_KEYS };

export const topKeysAt: KeysAt = (path) =>
  path.length === 0 ? TOP_KEYS : (Object.hasOwn(NESTED_KEYS, path[0]!) && NESTED_KEYS[path[0]!]) || [];
export const itemKeysAt: KeysAt = (path) => (path.length === 0 ? ITEM_KEYS : []);

export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const base = `unknown field '${key}'`;
  // A CSV's `input.seconds` column, written as a JSON line's key: the line nests it instead.
  const [, place, field] = /^(input|vars)\.(.+)$/.exec(key) ?? [];
  if (place !== undefined && known.includes(place))
    return `${base}: a JSON line nests it, as {"${place}": {"${field}": ...}}`;
  const option = known === TOP_KEYS || known === ITEM_KEYS ? optionFieldHint(key) : null;
  if (option !== null) return `${base}: ${option}`;
  const guess = closestMatch(key, known);
  if (guess !== null) return `${base}, did you mean '${guess}'?`;
  if (known.includes('input') && CHECKED_INPUT_FIELDS.includes(key)) {
    return `${base}: input fields go under 'input:'`;
  }
  const itemGuess = known === TOP_KEYS ? closestMatch(key, ITEM_KEYS) : null;
  if (itemGuess !== null) return `${base}: '${itemGuess}' belongs to each entry under 'items:'`;
  if (known === TOP_KEYS) return `${base} (expected one of: ${known.join(', ')}, or a name starting with x-)`;
  return known.length > 0 ? `${base} (expected one of: ${known.join(', ')})` : base;
}

/** Whether `path` names an entry its parent map does not have (a missing key). */
function isMissing(root: unknown, path: readonly PathSegment[]): boolean {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    if (Array.isArray(node) && typeof segment === 'number') node = node[segment];
    else if (isPlainObject(node) && typeof segment === 'string') {
      if (!Object.hasOwn(node, segment)) return i === path.length - 1;
      node = node[segment];
    } else return false;
  }
  return false;
}

export function reportIssues(
  issues: readonly z.core.$ZodIssue[],
  source: Source,
  root: unknown,
  keysAt: KeysAt,
  problems: ProblemList,
): void {
  const paths = issues.map((issue) =>
    issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
  );
  // 'promt' already says "did you mean 'prompt'?"; a second problem about the missing prompt is noise.
  const guessed = new Set<string>();
  issues.forEach((issue, i) => {
    if (issue.code !== 'unrecognized_keys') return;
    for (const key of issue.keys) {
      const guess = closestMatch(key, keysAt(paths[i]!));
      if (guess !== null) guessed.add(JSON.stringify([...paths[i]!, guess]));
    }
  });
  issues.forEach((issue, i) => {
    const path = paths[i]!;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        problems.at(source, [...path, key], unknownKeyMessage(key, keysAt(path)), 'key');
    } else if (isMissing(root, path)) {
      if (!guessed.has(JSON.stringify(path))) {
        problems.at(source, path, `missing required key '${String(path[path.length - 1])}'`);
      }
    } else {
      const params = issue.code === 'custom' ? (issue.params as { at?: unknown } | undefined) : undefined;
      const anchor: Anchor = params?.at === 'key' ? 'key' : 'value';
      problems.at(source, path, issue.message, anchor);
    }
  });
}
