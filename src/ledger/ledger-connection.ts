import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database, { type Database as Db, type Statement } from 'better-sqlite3';
import { BatchPaths, batchRootOf } from './batch-paths.js';
import { migrate } from './migrations.js';

export interface OpenOptions {
  now?: () => Date;
  readonly?: boolean;
}

/**
 * One open ledger file and the batch it is read or written for: the pragmas, the compiled
 * statements and the group commit that every query module of the ledger works through.
 */
export class LedgerConnection {
  readonly db: Db;
  readonly batchId: number;
  readonly now: () => Date;
  /** The batch's saved-file paths, stored relative to its manifest's folder (batch-paths.ts). */
  readonly paths: BatchPaths;
  readonly #statements = new Map<string, Statement>();
  readonly #columns = new Map<string, boolean>();
  #groupMs: number | null = null;
  #flushTimer: NodeJS.Timeout | null = null;
  #flushError: unknown = null;
  /** Runs one step as a transaction, or a savepoint inside the open one (see write). */
  readonly #step: (work: () => unknown) => unknown;

  private constructor(db: Db, batchId: number, now: () => Date, paths: BatchPaths) {
    this.db = db;
    this.batchId = batchId;
    this.now = now;
    this.paths = paths;
    // SQL that assembles paths itself (status's JSON arrays, plan's streamed rows) turns each
    // stored path back into an absolute one with this, so no caller ever sees the stored form.
    // A LEFT JOIN's missing file (export) stays null.
    db.function('batch_path', { deterministic: true }, (stored) =>
      stored === null ? null : paths.absolute(String(stored)),
    );
    // Made once: each transaction() call builds four wrapper functions, a few per ledger step.
    this.#step = db.transaction((work: () => unknown) => work());
  }

  /** Opens (creating with mode 0600 when new) and migrates the ledger, and finds or adds the batch. */
  static open(path: string, batchName: string, manifestPath: string, options: OpenOptions): LedgerConnection {
    const now = options.now ?? (() => new Date());
    if (!options.readonly) {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      // Create the file ourselves so it is 0600 from its first byte; SQLite gives -wal/-shm the same mode.
      closeSync(openSync(path, 'a', 0o600));
    }
    const db = new Database(path, {
      fileMustExist: true,
      readonly: options.readonly ?? false,
      timeout: 5000,
    });
    try {
      if (!options.readonly) {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        db.pragma('foreign_keys = ON');
        migrate(db, { batchName, manifestPath });
      }
      const batch = findBatch(db, batchName, manifestPath, now, options.readonly);
      const paths = new BatchPaths(batchRootOf(manifestPath), batchRootOf(batch.manifestPath));
      return new LedgerConnection(db, batch.id, now, paths);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  close(): void {
    if (!this.db.open) return;
    this.flush();
    this.db.close();
  }

  /** The current time as the ledger stores it. */
  at(): string {
    return this.now().toISOString();
  }

  /** Each SQL text is compiled once: compiling per call was an eighth of a 5,000-item run's CPU. */
  prepare(source: string): Statement {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.db.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  }

  /** A ledger opened read-only is never migrated, so a reader asks before using a newer column. */
  hasColumn(table: string, column: string): boolean {
    const key = `${table}.${column}`;
    let found = this.#columns.get(key);
    if (found === undefined) {
      const columns = this.db.pragma(`table_info(${table})`) as Array<{ name: string }>;
      found = columns.some((each) => each.name === column);
      this.#columns.set(key, found);
    }
    return found;
  }

  /** Whether a table exists: a ledger opened read-only may predate it. */
  hasTable(table: string): boolean {
    return (
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !==
      undefined
    );
  }

  /** See Ledger.groupCommits. */
  groupCommits(withinMs: number): void {
    this.#groupMs = withinMs;
  }

  /** Commits the open group, if any. */
  flush(): void {
    if (this.#flushTimer !== null) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    if (this.#flushError !== null) {
      const error = this.#flushError;
      this.#flushError = null;
      throw error;
    }
    if (this.db.open && this.db.inTransaction) this.db.exec('COMMIT');
  }

  /** One step, atomic on its own (a savepoint inside an open group), durable at once if `durable`. */
  write<T>(work: () => T, durable = false): T {
    if (this.#groupMs === null) return this.#step(work) as T;
    if (this.#flushError !== null) this.flush();
    if (!this.db.inTransaction) {
      this.db.exec('BEGIN IMMEDIATE');
      this.#flushTimer = setTimeout(() => {
        try {
          this.flush();
        } catch (error) {
          this.#flushError = error;
        }
      }, this.#groupMs);
      this.#flushTimer.unref();
    }
    const result = this.#step(work) as T;
    if (durable) this.flush();
    return result;
  }
}

/** Whether `error` came from SQLite: a ledger it cannot read, rather than a bug of ours. */
export function isLedgerReadError(error: unknown): boolean {
  return error instanceof Database.SqliteError;
}

/**
 * The batch's id and the manifest path its row records; a read-only look at a batch never added
 * reads as -1 (no rows match it). Opened for writing, the row is brought up to where the manifest
 * is now: the files' relative paths are read against that folder from here on (batch-paths.ts).
 */
function findBatch(
  db: Db,
  batchName: string,
  manifestPath: string,
  now: () => Date,
  readonly = false,
): { id: number; manifestPath: string } {
  const found = db
    .prepare('SELECT id, manifest_path AS manifestPath FROM batches WHERE name = ?')
    .get(batchName) as { id: number; manifestPath: string } | undefined;
  const current = resolve(manifestPath);
  if (found !== undefined) {
    if (readonly || found.manifestPath === current) return found;
    db.prepare('UPDATE batches SET manifest_path = ? WHERE id = ?').run(current, found.id);
    return { id: found.id, manifestPath: current };
  }
  if (readonly) return { id: -1, manifestPath: current };
  const info = db
    .prepare('INSERT INTO batches (name, manifest_path, created_at) VALUES (?, ?, ?)')
    .run(batchName, current, now().toISOString());
  return { id: Number(info.lastInsertRowid), manifestPath: current };
}
