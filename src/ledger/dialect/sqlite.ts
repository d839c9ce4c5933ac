import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database, { type Database as Db, type Statement as Prepared } from 'better-sqlite3';
import { CompiledQuery, Kysely, type QueryResult, SqliteDialect, sql } from 'kysely';
import { type MigrationContext, migrate } from '../migrations.js';
import type { Tables } from '../tables.js';
import type {
  Durability,
  LedgerCapabilities,
  LedgerDatabase,
  SqlParts,
  Statement,
  StatementResult,
  Tx,
} from './database.js';
import { StepQueue } from './step-queue.js';

/**
 * The ledger in one SQLite file (better-sqlite3 under Kysely's SqliteDialect), held by one run at
 * a time (lock.ts): the file's pragmas and migrations, and group commit (docs/performance.md):
 * steps a re-run can redo safely join one open transaction, each in a savepoint of its own,
 * committed with one disk sync at most `withinMs` later, or at once by a durable step.
 */

const PARTS: SqlParts = {
  key: (column) => sql<string>`${sql.ref(column)}`,
  filterOnly: (column) => sql<number>`+${sql.ref(column)}`,
  keyColumns: ['idempotency_key'],
  jsonAt: (column, path) => sql<string | null>`${sql.ref(column)} -> ${sql.lit(`$.${path.join('.')}`)}`,
  inList: (column, values) =>
    sql<boolean>`${sql.ref(column)} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`,
  isJsonDocument: (column) =>
    sql`json_valid(${sql.ref(column)}) AND json_type(${sql.ref(column)}) IN ('object', 'array')`,
  // The file's lock (lock.ts) holds the whole ledger for one run.
  lockBatch: () => null,
};

/** Statements compiled at most this many at a time (IN lists and chunks vary in length). */
const CACHED_STATEMENTS = 200;

/** Opens (creating with mode 0600 when new) and, unless read-only, migrates the file. */
export function openSqlite(path: string, readonly: boolean, context: MigrationContext): SqliteDatabase {
  if (!readonly) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Create the file ourselves so it is 0600 from its first byte; SQLite gives -wal/-shm the same mode.
    closeSync(openSync(path, 'a', 0o600));
  }
  const db = new Database(path, { fileMustExist: true, readonly, timeout: 5000 });
  try {
    if (!readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      migrate(db, context);
    }
    return new SqliteDatabase(db);
  } catch (error) {
    db.close();
    throw error;
  }
}

export class SqliteDatabase implements LedgerDatabase {
  // A file held by one run (lock.ts), of one batch's service.
  readonly capabilities: LedgerCapabilities = {
    severalRunners: false,
    storesDefinitions: false,
    servicePerBatch: false,
    jobCreationTimes: false,
  };
  readonly sql = PARTS;
  readonly q: Kysely<Tables>;
  readonly #queue = new StepQueue();
  readonly #db: Db;
  #groupMs: number | null = null;
  #inGroup = false;
  #timer: NodeJS.Timeout | null = null;
  #groupError: unknown = null;
  /** Who waits for the open group's commit (committed()). */
  readonly #commitWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  #closed = false;

  constructor(db: Db) {
    this.#db = db;
    this.q = new Kysely<Tables>({ dialect: new SqliteDialect({ database: cachedStatements(db) }) });
  }

  step<T>(work: () => Promise<T>): Promise<T> {
    return this.#queue.run(work);
  }

  async fileSettings(): Promise<{ journalMode: string; synchronous: number }> {
    const [mode] = await this.read(sql<{ journal_mode: string }>`PRAGMA journal_mode`.compile(this.q));
    const [sync] = await this.read(sql<{ synchronous: number }>`PRAGMA synchronous`.compile(this.q));
    return { journalMode: mode!.journal_mode, synchronous: sync!.synchronous };
  }

  async integrityCheck(): Promise<string> {
    const [row] = await this.read(sql<{ integrity_check: string }>`PRAGMA integrity_check`.compile(this.q));
    return row!.integrity_check;
  }

  write<T>(statements: readonly Statement[], parse: (results: StatementResult[]) => T): Promise<T> {
    return this.step(async () => parse(await this.batch(statements)));
  }

  async batch(statements: readonly Statement[], durability: Durability = 'redo'): Promise<StatementResult[]> {
    // A statement commits alone atomically; in an open group it joins it like any step.
    if (statements.length === 1 && this.#groupMs === null) return [await this.#exec(statements[0]!)];
    return this.transaction((tx) => tx.run(statements), durability);
  }

  async transaction<T>(work: (tx: Tx) => Promise<T>, durability: Durability = 'redo'): Promise<T> {
    this.#throwGroupError();
    const tx: Tx = { run: (statements) => this.#runAll(statements) };
    if (this.#groupMs === null) return this.#atomically('BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK', tx, work);
    if (!this.#inGroup) await this.#openGroup(this.#groupMs);
    const result = await this.#atomically(
      'SAVEPOINT step',
      'RELEASE step',
      'ROLLBACK TO step; RELEASE step',
      tx,
      work,
    );
    if (durability === 'durable') await this.#commitGroup();
    return result;
  }

  async read<R>(statement: CompiledQuery<R>): Promise<R[]> {
    return (await this.#exec(statement)).rows as R[];
  }

  groupCommits(withinMs: number): void {
    this.#groupMs = withinMs;
  }

  flush(): Promise<void> {
    return this.step(async () => {
      await this.#commitGroup();
      this.#throwGroupError();
    });
  }

  async committed(): Promise<void> {
    const waiting = await this.step(async () => {
      this.#throwGroupError();
      if (!this.#inGroup) return null;
      // The open group holds every step called before: its commit, whenever it comes, is theirs.
      // Waited for outside the step queue, where the commit itself is queued. Someone now waits
      // for the timer, so it holds the process open (an unref'd one let Node exit before it).
      this.#timer?.ref();
      return {
        commit: new Promise<void>((resolve, reject) => this.#commitWaiters.push({ resolve, reject })),
      };
    });
    await waiting?.commit;
  }

  close(): Promise<void> {
    return this.step(async () => {
      if (this.#closed) return;
      this.#closed = true;
      try {
        await this.#commitGroup();
      } finally {
        await this.q.destroy();
        // Kysely closes the file only if a statement ever ran through it.
        if (this.#db.open) this.#db.close();
      }
    });
  }

  async #atomically<T>(
    begin: string,
    commit: string,
    rollback: string,
    tx: Tx,
    work: (tx: Tx) => Promise<T>,
  ): Promise<T> {
    await this.#raw(begin);
    try {
      const result = await work(tx);
      await this.#raw(commit);
      return result;
    } catch (error) {
      await this.#undo(rollback, error);
      throw error;
    }
  }

  /**
   * Undoes a failed step. SQLite may have rolled back the whole transaction already (a full disk,
   * say): then there is nothing to undo, no group left open, and the step's own error is the one
   * to report, to the step and to whoever waits for the group's commit alike.
   */
  async #undo(rollback: string, cause: unknown): Promise<void> {
    if (!this.#db.inTransaction) {
      this.#inGroup = false;
      if (this.#timer !== null) clearTimeout(this.#timer);
      this.#timer = null;
      // The group's earlier steps were rolled back with it: nobody waiting for them may go on.
      for (const waiter of this.#commitWaiters.splice(0)) waiter.reject(cause);
      return;
    }
    for (const each of rollback.split('; ')) await this.#raw(each);
  }

  async #openGroup(withinMs: number): Promise<void> {
    await this.#raw('BEGIN IMMEDIATE');
    this.#inGroup = true;
    // The commit is a step of its own: it never lands between another step's statements.
    this.#timer = setTimeout(() => {
      this.step(() => this.#commitGroup()).catch((error: unknown) => {
        this.#groupError = error;
      });
    }, withinMs);
    this.#timer.unref();
  }

  async #commitGroup(): Promise<void> {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (!this.#inGroup) return;
    this.#inGroup = false;
    const waiters = this.#commitWaiters.splice(0);
    try {
      await this.#raw('COMMIT');
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
      throw error;
    }
    for (const waiter of waiters) waiter.resolve();
  }

  /** A group that failed to commit on its own timer fails the next step, as it would have. */
  #throwGroupError(): void {
    if (this.#groupError === null) return;
    const error = this.#groupError;
    this.#groupError = null;
    throw error;
  }

  async #runAll(statements: readonly Statement[]): Promise<StatementResult[]> {
    const results: StatementResult[] = [];
    for (const statement of statements) results.push(await this.#exec(statement));
    return results;
  }

  async #exec(statement: CompiledQuery): Promise<StatementResult> {
    return resultOf(await this.q.executeQuery(statement));
  }

  #raw(text: string): Promise<unknown> {
    return this.q.executeQuery(CompiledQuery.raw(text));
  }
}

/** The tables and columns the file has (a read-only look never migrates it), as `table` and `table.column`. */
export async function sqliteColumns(db: LedgerDatabase): Promise<Set<string>> {
  const rows = await db.read(
    sql<{ t: string; c: string }>`SELECT m.name AS t, p.name AS c FROM sqlite_master m
      JOIN pragma_table_info(m.name) p WHERE m.type = 'table'`.compile(db.q),
  );
  return new Set(rows.flatMap((row) => [row.t, `${row.t}.${row.c}`]));
}

function resultOf(result: QueryResult<unknown>): StatementResult {
  return { rows: result.rows as StatementResult['rows'], changes: Number(result.numAffectedRows ?? 0) };
}

/**
 * The file for Kysely, each SQL text compiled by SQLite once: compiling per call was an eighth of
 * a 5,000-item run's CPU. A few hundred texts cover every step (IN lists vary by length).
 */
function cachedStatements(db: Db): { close(): void; prepare(text: string): Prepared } {
  const statements = new Map<string, Prepared>();
  return {
    close: () => db.close(),
    prepare(text: string): Prepared {
      let statement = statements.get(text);
      if (statement === undefined) {
        statement = db.prepare(text);
        if (statements.size >= CACHED_STATEMENTS) statements.delete(statements.keys().next().value!);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}
