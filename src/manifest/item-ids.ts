/**
 * Every item's id across a streamed manifest, kept compact: a map from the id in lower case to a
 * number, and each claim's line, column and place in typed arrays, instead of the parsed items.
 * The rules and messages stay base-ids.ts's: each chunk's assignBaseIds claims its ids here.
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

export class ItemIds implements IdClaims {
  /** Lower-case id to claim number. */
  private readonly byKey = new Map<string, number>();
  /** Only the ids whose spelling differs from their lower case (the case-clash message names it). */
  private readonly cased = new Map<number, string>();
  private readonly files: string[] = [];
  private lines = new Uint32Array(1024);
  private columns = new Uint32Array(1024);
  /** File number, the source's list ('items' 0 or 'items_from' 1), whether declared: packed. */
  private kinds = new Uint32Array(1024);
  private indexes = new Uint32Array(1024);
  private count = 0;

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): Claim | undefined {
    const n = this.byKey.get(key);
    return n === undefined ? undefined : this.claim(n, key);
  }

  /** Whether an item has this very id (not only one that differs in letter case). */
  has(id: string): boolean {
    const key = id.toLowerCase();
    const n = this.byKey.get(key);
    return n !== undefined && (this.cased.get(n) ?? key) === id;
  }

  set(key: string, { source, id, declared }: Claim): this {
    this.byKey.set(key, this.add(source, id, declared));
    return this;
  }

  private add(source: Source, id: string, declared: boolean): number {
    if (this.count === this.lines.length) this.grow();
    const n = this.count++;
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
    const bigger = (old: Uint32Array) => {
      const next = new Uint32Array(old.length * 2);
      next.set(old);
      return next;
    };
    this.lines = bigger(this.lines);
    this.columns = bigger(this.columns);
    this.kinds = bigger(this.kinds);
    this.indexes = bigger(this.indexes);
  }
}
