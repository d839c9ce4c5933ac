import { channel } from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { queryWorker } from './query-worker.js';

/** How to reach the database: pg's client options, the password among them; never logged. */
export interface PgConfig {
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  ssl?: boolean | { rejectUnauthorized: boolean };
  connectionString?: string;
}

export interface SyncConnectionOptions {
  /** How long a step waits for a lost database to answer again before the ledger is lost. */
  reconnectWithinMs: number;
}

/** The database stopped answering for longer than the ledger waits: the run stops, no item fails. */
export class DatabaseLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseLostError';
  }
}

/** An error the database itself gave (a constraint, a bad statement), with its SQLSTATE. */
export class DatabaseError extends Error {
  readonly code: string | null;
  readonly constraint: string | null;
  constructor(message: string, code: string | null, constraint: string | null) {
    super(message);
    this.name = 'DatabaseError';
    this.code = code;
    this.constraint = constraint;
  }
}

interface Reply {
  ok: boolean;
  rows?: unknown[];
  rowCount?: number;
  error?: { message: string; code: string | null; constraint: string | null; lost: boolean };
}

/** Longest a statement may take before its connection counts as lost (a network cut sends no reset). */
const STATEMENT_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** Between tries while the database is away. */
const RETRY_PAUSE_MS = 250;
/**
 * A closing connection publishes `{ roundTrips }` here: the bench's child-stats.mjs, loaded in the
 * CLI's own process, listens and reports each runner's round trips. Nothing is published, and
 * nothing is printed, when no one listens.
 */
const CLOSED = channel('mediabatch:postgres-connection-closed');

/**
 * A synchronous PostgreSQL connection. The ledger's door is synchronous by design: a step is
 * committed before the runner goes on (the attempt before its POST, a budget check and its
 * reservation in one turn), exactly as with SQLite. `pg` is asynchronous, so it runs in a worker
 * thread and this side waits for each answer on a shared counter (Atomics.wait), the way
 * better-sqlite3 waits for its disk. One statement is one round trip.
 *
 * A step (`transaction`) that loses its connection is run again from its start once the database
 * answers, up to `reconnectWithinMs`: the ledger's steps are written so that running one twice
 * leaves what running it once does (docs/shared-ledger.md).
 */
export class SyncConnection {
  readonly #worker: Worker;
  readonly #reply: MessageChannel['port1'];
  readonly #signal: Int32Array;
  readonly #options: SyncConnectionOptions;
  #inTransaction = false;
  #closed = false;
  /** Statements sent since opened: the round trips the bench reports. */
  roundTrips = 0;

  constructor(config: PgConfig, options: SyncConnectionOptions) {
    const pgPath = createRequire(import.meta.url).resolve('pg');
    const shared = new SharedArrayBuffer(4);
    const channel = new MessageChannel();
    this.#signal = new Int32Array(shared);
    this.#reply = channel.port1;
    this.#options = options;
    this.#worker = new Worker(workerSource(), {
      eval: true,
      // Nothing implicit: the worker sees no environment, only the settings given here.
      env: {},
      workerData: {
        pgPath,
        signal: shared,
        reply: channel.port2,
        config: {
          ...config,
          connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
          query_timeout: STATEMENT_TIMEOUT_MS,
          keepAlive: true,
          application_name: 'mediabatch',
        },
      },
      transferList: [channel.port2],
    });
    this.#worker.unref();
  }

  /**
   * One statement (placeholders $1, $2...) inside the open transaction, or on its own; on its own,
   * a lost connection sends it again once the database answers.
   */
  query<T>(sql: string, params: readonly unknown[] = []): T[] {
    if (this.#inTransaction) return this.#call(sql, params).rows as T[];
    return this.#retrying(() => this.#call(sql, params).rows as T[]);
  }

  /**
   * As query, each row an array in the SELECT's order: the 100,000-row views cross the thread as
   * arrays, which clone in about half the time of named rows, as better-sqlite3's raw() builds them.
   */
  queryArrays<T extends unknown[]>(sql: string, params: readonly unknown[] = []): T[] {
    if (this.#inTransaction) return this.#call(sql, params, true).rows as T[];
    return this.#retrying(() => this.#call(sql, params, true).rows as T[]);
  }

  /** Rows changed by one statement. */
  execute(sql: string, params: readonly unknown[] = []): number {
    if (this.#inTransaction) return this.#call(sql, params).rowCount ?? 0;
    return this.#retrying(() => this.#call(sql, params).rowCount ?? 0);
  }

  /**
   * Runs `work` as one transaction; a lost connection runs it again from the start once the
   * database answers, so `work` must touch nothing but the database. Nested calls join the outer one.
   */
  transaction<T>(work: () => T): T {
    if (this.#inTransaction) return work();
    return this.#retrying(() => {
      try {
        this.#inTransaction = true;
        this.#call('BEGIN', []);
        const result = work();
        this.#call('COMMIT', []);
        return result;
      } catch (error) {
        if (!(error instanceof LostConnection)) this.#rollBack();
        throw error;
      } finally {
        this.#inTransaction = false;
      }
    });
  }

  /** True while a transaction is open on this connection. */
  get inTransaction(): boolean {
    return this.#inTransaction;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (CLOSED.hasSubscribers) CLOSED.publish({ roundTrips: this.roundTrips });
    try {
      this.#send({ close: true }, CONNECT_TIMEOUT_MS);
    } catch {
      // Closing a connection to a database that is gone: nothing left to tell it.
    }
    void this.#worker.terminate();
    this.#reply.close();
  }

  #rollBack(): void {
    try {
      this.#call('ROLLBACK', []);
    } catch {
      // A lost connection has rolled the transaction back already.
    }
  }

  /** Runs `attempt` until it gets through, pausing between tries, for at most reconnectWithinMs. */
  #retrying<T>(attempt: () => T): T {
    const started = Date.now();
    for (;;) {
      try {
        return attempt();
      } catch (error) {
        if (!(error instanceof LostConnection)) throw error;
        if (Date.now() - started >= this.#options.reconnectWithinMs)
          throw new DatabaseLostError(`the ledger's database stopped answering: ${error.message}`);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_PAUSE_MS);
      }
    }
  }

  #call(sql: string, params: readonly unknown[], arrays = false): Reply {
    if (this.#closed) throw new Error('the ledger is closed');
    this.roundTrips += 1;
    const reply = this.#send({ sql, params, arrays }, STATEMENT_TIMEOUT_MS + CONNECT_TIMEOUT_MS + 1_000);
    if (reply.ok) return reply;
    const error = reply.error!;
    if (error.lost) throw new LostConnection(error.message);
    throw new DatabaseError(error.message, error.code, error.constraint);
  }

  #send(message: unknown, timeoutMs: number): Reply {
    this.#worker.postMessage(message);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // The counter is read before the port is looked at: read after, a reply posted and counted
      // in between would leave the wait below sleeping to its deadline (an answered statement
      // taken for a lost connection 36 s later).
      const seen = Atomics.load(this.#signal, 0);
      const received = receiveMessageOnPort(this.#reply);
      if (received) return received.message as Reply;
      const left = deadline - Date.now();
      if (left <= 0) throw new LostConnection('no answer from the database connection');
      // Returns at once if the worker answered since `seen` was read; else sleeps until it does.
      Atomics.wait(this.#signal, 0, seen, left);
    }
  }
}

/**
 * The worker's program: queryWorker's own text, called with the worker's require. A transform that
 * keeps function names (esbuild's, under tsx and the tests) wraps them in a `__name` helper of its
 * module, which the worker's text would lack: it gets one that does nothing.
 */
function workerSource(): string {
  return `const __name = (target) => target;\n(${queryWorker.toString()})(require);`;
}

/** A connection that failed mid-step; the step is run again (transaction), else the ledger is lost. */
class LostConnection extends Error {}
