/**
 * Every item's id across a streamed manifest, kept compact: each id in lower case, its claim's
 * line, column and place, in typed arrays found through a hash table of its own (open addressing),
 * instead of the parsed items, or a Map of a million strings. The arrays live outside the V8 heap,
 * which Node lets grow to several times what is live: held in it, a million ids made a plan's heap
 * four times their size (docs/performance.md, "Issue 53"). The rules and messages stay
 * base-ids.ts's: each chunk's assignBaseIds claims its ids here.
 */
import type { Claim, IdClaims } from './base-ids.js';
import type { Path, Position, Source } from './problems.js';

/** Where a claim was written, rebuilt from its numbers: enough for `where()` and a problem. */
class ClaimSource implements Source {
  constructor(
    readonly file: string,
    readonly prefix: Path,
    private readonly at: Position,
  ) {}

  position(): Position {
    return this.at;
  }
}

const EMPTY = -1;

export class ItemIds implements IdClaims {
  /** Claim numbers by the slot their key hashes to (EMPTY: none); twice as many slots as claims at least. */
  private table = new Int32Array(2048).fill(EMPTY);
  /** Each claim's key (the id in lower case), its UTF-16 code units one after another. */
  private chars = new Uint16Array(16 * 1024);
  private used = 0;
  private starts = new Uint32Array(1024);
  private hashes = new Uint32Array(1024);
  /** Only the ids whose spelling differs from their lower case (the case-clash message names it). */
  private readonly cased = new Map<number, string>();
  private readonly files: string[] = [];
  private lines = new Uint32Array(1024);
  private columns = new Uint32Array(1024);
  /** File number, the source's list ('items' 0 or 'items_from' 1), whether declared: packed. */
  private kinds = new Uint32Array(1024);
  private indexes = new Uint32Array(1024);
  private count = 0;
  /** Keys held (a claim whose key was claimed again stands for it no more). */
  private keys = 0;

  get size(): number {
    return this.keys;
  }

  get(key: string): Claim | undefined {
    const n = this.table[this.slotOf(key, hashOf(key))]!;
    return n === EMPTY ? undefined : this.claim(n, key);
  }

  /** Whether an item has this very id (not only one that differs in letter case). */
  has(id: string): boolean {
    const key = id.toLowerCase();
    const n = this.table[this.slotOf(key, hashOf(key))]!;
    return n !== EMPTY && (this.cased.get(n) ?? key) === id;
  }

  set(key: string, { source, id, declared }: Claim): this {
    const hash = hashOf(key);
    const slot = this.slotOf(key, hash);
    if (this.table[slot] === EMPTY) this.keys += 1;
    this.table[slot] = this.add(key, hash, source, id, declared);
    if (this.keys * 2 > this.table.length) this.rehash();
    return this;
  }

  /** The slot holding `key`, or the empty one it would go to. */
  private slotOf(key: string, hash: number): number {
    const mask = this.table.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const n = this.table[slot]!;
      if (n === EMPTY || (this.hashes[n] === hash && this.keyIs(n, key))) return slot;
    }
  }

  private keyIs(n: number, key: string): boolean {
    const start = this.starts[n]!;
    const end = n + 1 < this.count ? this.starts[n + 1]! : this.used;
    if (end - start !== key.length) return false;
    for (let i = 0; i < key.length; i += 1) if (this.chars[start + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  private add(key: string, hash: number, source: Source, id: string, declared: boolean): number {
    if (this.count === this.lines.length) this.grow();
    while (this.used + key.length > this.chars.length) this.chars = bigger(this.chars, this.chars.length * 2);
    const n = this.count++;
    this.starts[n] = this.used;
    for (let i = 0; i < key.length; i += 1) this.chars[this.used++] = key.charCodeAt(i);
    this.hashes[n] = hash;
    const { line, column } = source.position([], 'value');
    let file = this.files.lastIndexOf(source.file);
    if (file < 0) file = this.files.push(source.file) - 1;
    this.lines[n] = line;
    this.columns[n] = column;
    this.kinds[n] = (file << 2) | (source.prefix[0] === 'items_from' ? 2 : 0) | (declared ? 1 : 0);
    this.indexes[n] = Number(source.prefix[1] ?? 0);
    if (id !== id.toLowerCase()) this.cased.set(n, id);
    return n;
  }

  private claim(n: number, key: string): Claim {
    const kind = this.kinds[n]!;
    const prefix = [kind & 2 ? 'items_from' : 'items', this.indexes[n]!];
    const source = new ClaimSource(this.files[kind >>> 2]!, prefix, {
      line: this.lines[n]!,
      column: this.columns[n]!,
    });
    return { source, id: this.cased.get(n) ?? key, declared: (kind & 1) === 1 };
  }

  private grow(): void {
    const size = this.lines.length * 2;
    this.starts = bigger(this.starts, size);
    this.hashes = bigger(this.hashes, size);
    this.lines = bigger(this.lines, size);
    this.columns = bigger(this.columns, size);
    this.kinds = bigger(this.kinds, size);
    this.indexes = bigger(this.indexes, size);
  }

  /** Twice the slots, each key placed again by its hash. */
  private rehash(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2).fill(EMPTY);
    const mask = this.table.length - 1;
    for (const n of old) {
      if (n === EMPTY) continue;
      let slot = this.hashes[n]! & mask;
      while (this.table[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.table[slot] = n;
    }
  }
}

function bigger<T extends Uint32Array | Uint16Array>(old: T, size: number): T {
  const next = new (old.constructor as new (length: number) => T)(size);
  next.set(old);
  return next;
}

/** FNV-1a over a key's UTF-16 code units. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
