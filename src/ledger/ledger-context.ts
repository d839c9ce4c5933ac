import { type RawBuilder, sql } from 'kysely';
import type { BatchPaths } from './batch-paths.js';
import type { LedgerDatabase } from './dialect/database.js';

/**
 * One open ledger and the batch it is read or written for: what every step module works through,
 * on either database. Steps build their statements with `q` and run them through `db`.
 */
export class LedgerContext {
  readonly db: LedgerDatabase;
  readonly batchId: number;
  readonly now: () => Date;
  /** The batch's saved-file paths, stored relative to its manifest's folder (batch-paths.ts). */
  readonly paths: BatchPaths;
  /** This runner's name among a shared ledger's runners; null for one run, or a command. */
  readonly runnerId: string | null;
  /** The tables and columns a ledger opened read-only has (it is never migrated); null: all. */
  readonly #columns: ReadonlySet<string> | null;

  constructor(fields: {
    db: LedgerDatabase;
    batchId: number;
    now: () => Date;
    paths: BatchPaths;
    runnerId: string | null;
    columns: ReadonlySet<string> | null;
  }) {
    this.db = fields.db;
    this.batchId = fields.batchId;
    this.now = fields.now;
    this.paths = fields.paths;
    this.runnerId = fields.runnerId;
    this.#columns = fields.columns;
  }

  get q(): LedgerDatabase['q'] {
    return this.db.q;
  }

  /** What the database's ledger can do (dialect/database.ts): asked instead of which database it is. */
  get can(): LedgerDatabase['capabilities'] {
    return this.db.capabilities;
  }

  /** No batch to read: a read-only look at a ledger (or an empty database) that never recorded it. */
  get none(): boolean {
    return this.batchId === -1;
  }

  /** The current time as the ledger stores it. */
  at(): string {
    return this.now().toISOString();
  }

  /** Whether the ledger has this table (and column): one opened read-only may predate them. */
  has(table: string, column?: string): boolean {
    if (this.#columns === null) return true;
    return this.#columns.has(column === undefined ? table : `${table}.${column}`);
  }

  /** `ref` (table.column, or a column) where the ledger has the column, else `fallback` in its place. */
  column<T>(table: string, column: string, ref: string, fallback: T): RawBuilder<T> {
    return this.has(table, column) ? sql<T>`${sql.ref(ref)}` : sql<T>`${sql.lit(fallback)}`;
  }
}
