import type { CompiledQuery, Expression, Kysely, RawBuilder } from 'kysely';
import type { Tables } from '../tables.js';

/** One statement of a step, compiled by the ledger's Kysely for its database. */
// biome-ignore lint/suspicious/noExplicitAny: a step's statements return rows of many shapes.
export type Statement = CompiledQuery<any>;

/** What one statement gave back: its rows (a SELECT's, or RETURNING's) and the rows it changed. */
export interface StatementResult {
  // biome-ignore lint/suspicious/noExplicitAny: rows as the database gives them, typed by each step.
  rows: any[];
  changes: number;
}

/** Inside a step that decides between its statements (LedgerDatabase.transaction). */
export interface Tx {
  /**
   * Runs these statements, in order, in the step's transaction. PostgreSQL sends them together:
   * one round trip. `last`: the step's final statements, its COMMIT sent with them.
   */
  run(statements: readonly Statement[], last?: boolean): Promise<StatementResult[]>;
}

/**
 * How a write may be committed. `redo`: a step a re-run can redo safely, which joins SQLite's
 * open group (groupCommits); `durable`: committed before the step returns (write-ahead).
 */
export type Durability = 'redo' | 'durable';

/**
 * One open ledger database, as every step module of the ledger uses it: the same calls on SQLite
 * and PostgreSQL (dialect/sqlite.ts, dialect/postgres.ts), each step one transaction.
 */
export interface LedgerDatabase {
  /** What this database's ledger does that the other's does not: asked instead of which it is. */
  readonly capabilities: LedgerCapabilities;
  /** Builds and compiles statements; never run directly (steps go through the calls below). */
  readonly q: Kysely<Tables>;
  /** The SQL the two databases spell differently. */
  readonly sql: SqlParts;
  /**
   * Runs `work` after every step called before it: steps run in the order they are called, so a
   * read sees every write called before it. Every ledger step goes through here.
   */
  step<T>(work: () => Promise<T>): Promise<T>;
  /** The statements as one transaction, in one round trip on PostgreSQL; one statement commits alone. */
  batch(statements: readonly Statement[], durability?: Durability): Promise<StatementResult[]>;
  /**
   * A step that is one batch and nothing else (a redo write), its results made into its answer by
   * `parse`. On PostgreSQL such steps queued one after another go in one transaction and one round
   * trip (write-groups.ts); on SQLite it is a step like any other. Never called inside a step.
   */
  write<T>(statements: readonly Statement[], parse: (results: StatementResult[]) => T): Promise<T>;
  /** The durability settings in force on a ledger file's connection (synchronous 2 is FULL); null for a server. */
  fileSettings(): Promise<{ journalMode: string; synchronous: number } | null>;
  /** The database's own check of its file ('ok'); null for a server, which checks its own. */
  integrityCheck(): Promise<string | null>;
  /** A step that reads, decides, and writes, in one transaction (run again whole after a lost connection). */
  transaction<T>(work: (tx: Tx) => Promise<T>, durability?: Durability): Promise<T>;
  /** One statement on its own: a read. */
  read<R>(statement: CompiledQuery<R>): Promise<R[]>;
  groupCommits(withinMs: number): void;
  /** Commits SQLite's open group, after every step called before. */
  flush(): Promise<void>;
  /**
   * Resolves once every step called before is committed, without forcing the commit: SQLite's
   * open group commits on its timer (or a durable step) as it would anyway. Rejects if it fails.
   */
  committed(): Promise<void>;
  /** Closes after every step called before, and never waits long on a database that went away. */
  close(): Promise<void>;
}

/**
 * What differs between the two ledgers as what each can do, so that no code outside dialect/ asks
 * which database it is. A SQLite file is held by one run; a PostgreSQL database is shared by
 * runners on many machines and holds many batches.
 */
export interface LedgerCapabilities {
  /**
   * Runners on many machines work its batches at once: rows name their runner, items carry
   * leases, runs beat a heartbeat, and a new attempt's key may already be another runner's.
   */
  readonly severalRunners: boolean;
  /** Each batch's definition is stored (batch_definitions): the manifest every runner runs. */
  readonly storesDefinitions: boolean;
  /** The service is bound per batch (on its batches row); else once for the file (the service table). */
  readonly servicePerBatch: boolean;
  /** An attempt keeps its job's creation time (job_created_at), for the batch's one lister. */
  readonly jobCreationTimes: boolean;
}

/** SQL the two databases spell differently, for the step modules that need it. */
export interface SqlParts {
  /**
   * A text column in byte order, as keys are compared, grouped and sorted for paging: SQLite's
   * BINARY collation; on PostgreSQL, COLLATE "C" whatever the database's own collation.
   */
  key(column: string): RawBuilder<string>;
  /**
   * A column a walk in another key's order filters on, kept from leading the plan: SQLite would
   * otherwise walk the batch's index and sort every page; PostgreSQL's planner needs it as it is.
   */
  filterOnly(column: string): RawBuilder<number>;
  /** Conflict columns of an attempt's idempotency key: unique in the file, or per batch. */
  readonly keyColumns: readonly ('batch_id' | 'idempotency_key')[];
  /** The JSON value at `path` (keys) of a text column holding JSON, as JSON text; null when absent. */
  jsonAt(column: string, path: readonly string[]): RawBuilder<string | null>;
  /**
   * `column` is one of `values`, which go as one parameter, whatever their number: one SQL text
   * (compiled once, SQLite's statements cached by it) for every page of a streamed read.
   */
  inList(column: string, values: readonly string[] | readonly number[]): RawBuilder<boolean>;
  /** A condition true where `column` holds a JSON object or array (price samples read those only). */
  isJsonDocument(column: string): Expression<unknown>;
  /**
   * The statement that takes the batch's lock until the transaction ends, where runners share
   * the database (admission, a definition, a copy's load); null for a file one run holds.
   */
  lockBatch(q: Kysely<Tables>, batchId: number): Statement | null;
}
