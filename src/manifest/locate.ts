/**
 * Maps a value path (`['items', 3, 'input', 'seconds']`) back to where it was written in the YAML
 * text, so that every problem can name a line and column.
 */
import { type Document, isAlias, isMap, isNode, isPair, isScalar, isSeq, type LineCounter } from 'yaml';
import type { Anchor, Path, PathSegment, Position, Source } from './problems.js';

type AnyNode = unknown;

function startOf(node: AnyNode): number | undefined {
  return isNode(node) && node.range ? node.range[0] : undefined;
}

function keyText(key: AnyNode): string | undefined {
  if (isScalar(key)) return String(key.value);
  return undefined;
}

function deref(doc: Document, node: AnyNode): AnyNode {
  // An alias can only point backwards, so following at most a few hops cannot loop.
  let current = node;
  for (let hops = 0; hops < 8 && isAlias(current); hops++) current = current.resolve(doc);
  return current;
}

/** Each map's pairs by key text, the last duplicate winning; built once per map, on first use. */
const pairsByKey = new WeakMap<object, Map<string, unknown>>();

function lastPairWithKey(map: { items: unknown[] }, key: string): unknown {
  let index = pairsByKey.get(map);
  if (!index) {
    index = new Map();
    for (const candidate of map.items) {
      const text = isPair(candidate) ? keyText(candidate.key) : undefined;
      if (text !== undefined) index.set(text, candidate);
    }
    pairsByKey.set(map, index);
  }
  return index.get(key);
}

/** Offset of the node at `path`; for a missing entry, the offset of the nearest existing parent. */
export function offsetOf(doc: Document, path: Path, anchor: Anchor): number {
  let node: AnyNode = doc.contents;
  let best = startOf(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i] as PathSegment;
    const last = i === path.length - 1;
    node = deref(doc, node);
    if (isMap(node)) {
      // The last duplicate wins when YAML becomes data, so the last one is the value that was checked.
      // Indexed: a problem per key of a huge map must not cost a scan of the map each.
      const pair = lastPairWithKey(node, String(segment));
      if (!isPair(pair)) return best;
      const keyStart = startOf(pair.key) ?? best;
      const valueStart = startOf(pair.value);
      if (last) return anchor === 'key' || valueStart === undefined ? keyStart : valueStart;
      best = valueStart ?? keyStart;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      const itemStart = startOf(item);
      if (itemStart === undefined) return best;
      best = itemStart;
      node = item;
    } else {
      return best;
    }
  }
  return best;
}

/**
 * The value path of the map key or sequence entry that starts at `offset`, for errors the YAML
 * parser reports by offset (duplicate keys).
 */
export function pathAtOffset(doc: Document, offset: number): PathSegment[] {
  const path: PathSegment[] = [];
  let node: AnyNode = doc.contents;
  for (let depth = 0; depth < 1000; depth++) {
    const within = (n: AnyNode): boolean =>
      isNode(n) && n.range !== undefined && n.range !== null && n.range[0] <= offset && offset < n.range[2];
    if (isMap(node)) {
      // A tag or anchor sits between key and value, outside both nodes' ranges.
      const between = (p: { key: AnyNode; value: AnyNode }) => {
        const start = startOf(p.key);
        const end = isNode(p.value) && p.value.range ? p.value.range[2] : undefined;
        return start !== undefined && end !== undefined && start <= offset && offset < end;
      };
      const pair = node.items.find((p) => within(p.key) || within(p.value) || between(p));
      if (!pair) break;
      path.push(keyText(pair.key) ?? '?');
      if (within(pair.key)) break;
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex(within);
      if (index < 0) break;
      path.push(index);
      node = node.items[index];
    } else {
      break;
    }
  }
  return path;
}

export function toPosition(lineCounter: LineCounter, offset: number): Position {
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/** A source rooted at `prefix` inside the manifest's YAML document. */
export class YamlSource implements Source {
  constructor(
    readonly file: string,
    private readonly doc: Document,
    private readonly lineCounter: LineCounter,
    readonly prefix: Path,
  ) {}

  position(rel: Path, anchor: Anchor): Position {
    return toPosition(this.lineCounter, offsetOf(this.doc, [...this.prefix, ...rel], anchor));
  }
}

interface PathLink {
  parent: PathLink | null;
  segment: PathSegment;
}

function pathOf(link: PathLink | null): PathSegment[] {
  const path: PathSegment[] = [];
  for (let at = link; at !== null; at = at.parent) path.push(at.segment);
  return path.reverse();
}

export interface DuplicateKey {
  /** Where the repeated key was written the second (or later) time. */
  offset: number;
  /** The value path of that key, ending with the key itself. */
  path: PathSegment[];
}

/**
 * Keys that repeat within one map (scalars with the same value, as the parser's `uniqueKeys`
 * defines them), in time linear in the document. Iterative, so deep nesting cannot overflow it.
 */
export function duplicateKeys(doc: Document): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  const stack: Array<{ node: unknown; at: PathLink | null }> = [{ node: doc.contents, at: null }];
  while (stack.length > 0) {
    const { node, at } = stack.pop()!;
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : undefined;
        const link = { parent: at, segment: isScalar(pair.key) ? String(key) : '?' };
        if (isScalar(pair.key)) {
          if (seen.has(key)) found.push({ offset: pair.key.range?.[0] ?? 0, path: pathOf(link) });
          seen.add(key);
        }
        stack.push({ node: pair.value, at: link });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        stack.push({ node: item, at: { parent: at, segment: index } });
      });
    }
  }
  return found;
}
