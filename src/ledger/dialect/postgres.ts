import { channel } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { DatabaseLostError } from '../../errors.js';
import type { Tables } from '../tables.js';
import type {
  LedgerCapabilities,
  LedgerDatabase,
  SqlParts,
  Statement,
  StatementResult,
  Tx,
} from './database.js';
import { asDatabaseError, isConflict, isLost, messageOf, missingPassword } from './postgres-errors.js';
import { StepQueue } from './step-queue.js';
import { WriteGroups } from './write-groups.js';

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

export interface PostgresOptions {
  /** How long a step waits for a database that stopped answering before the ledger is lost. */
  reconnectWithinMs: number;
  /** Called once each time the database stops answering, with how long the steps will wait for it. */
  onWaiting?: ((waitMs: number) => void) | undefined;
}

const PARTS: SqlParts = {
  key: (column) => sql<string>`${sql.ref(column)} COLLATE "C"`,
  filterOnly: (column) => sql<number>`${sql.ref(column)}`,
  keyColumns: ['batch_id', 'idempotency_key'],
  jsonAt: (column, path) =>
    sql<string | null>`(${sql.ref(column)}::jsonb -> ${sql.join(
      path.map((key) => sql.lit(key)),
      sql` -> `,
    )})::text`,
  inList: (column, values) => sql<boolean>`${sql.ref(column)} = ANY(${[...values]})`,
  isJsonDocument: (column) => sql`${sql.ref(column)} ~ '^\\s*[[{]'`,
  lockBatch: (q, batchId) => sql`SELECT pg_advisory_xact_lock(${BATCH_LOCK}, ${batchId})`.compile(q),
};

/**
 * The advisory lock's first key (the second is the batch's id): runners admitting attempts,
 * writing a definition, and a copy loading a batch take it.
 */
const BATCH_LOCK = 727_002;

const CONNECT_TIMEOUT_MS = 5_000;
/** Longest a statement may take before its connection counts as lost (a network cut sends no reset). */
const STATEMENT_TIMEOUT_MS = 30_000;
/** Between tries while the database is away. */
const RETRY_PAUSE_MS = 250;
/** Times a step rolled back by a deadlock or a serialization failure runs again before it fails. */
const CONFLICT_TRIES = 8;
/** Statements with more parameters than this are not prepared by name (#nameOf). */
const NAMED_MAX_PARAMETERS = 64;
/** Longest close() waits for the database to say goodbye. */
const CLOSE_WAIT_MS = 1_000;
const BEGIN = CompiledQuery.raw('BEGIN');
const COMMIT = CompiledQuery.raw('COMMIT');
const ROLLBACK = CompiledQuery.raw('ROLLBACK');
/**
 * A closing ledger publishes `{ roundTrips, statements }` here: the bench's child-stats.mjs, loaded
 * in the CLI's own process, listens and reports each runner's round trips. Nothing is published
 * when no one listens.
 */
const CLOSED = channel('mediabatch:postgres-connection-closed');

/**
 * Opens a pool of one connection (steps run one at a time, StepQueue) without connecting yet.
 * `pg` is loaded here only: a SQLite ledger never loads it. The address, password and TLS are
 * resolved as pg resolves them (the URL, then PG* variables), so messages name what was tried.
 */
export async function openPostgres(config: PgConfig, options: PostgresOptions): Promise<PostgresDatabase> {
  const { default: pg } = await import('pg');
  const probe = new pg.Client(config);
  const address = `${probe.host}:${probe.port}`;
  const password = probe.password as unknown as string | null;
  const settings: PoolConfig = {
    host: probe.host,
    port: probe.port,
    user: probe.user,
    database: probe.database,
    password: password || missingPassword(address),
    ssl: config.ssl ?? (probe as unknown as { ssl: PoolConfig['ssl'] }).ssl,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'mediabatch',
    // A step's statements go out together and their answers come back together: one round trip.
    pipeline: true,
    max: 1,
    idleTimeoutMillis: 0,
    allowExitOnIdle: true,
    // Money and ids are bigint columns; micro-dollars stay far below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? Number : pg.types.getTypeParser(oid, format)) as never,
    },
  };
  // Every client the pool makes, one that failed to log in among them: pg leaves its socket open,
  // and a command that could not open its ledger must still end (close cuts what is left).
  const made = new Set<PoolClient>();
  class TrackedClient extends pg.Client {
    constructor(config?: ConstructorParameters<typeof pg.Client>[0]) {
      super(config);
      made.add(this as unknown as PoolClient);
      this.once('end', () => made.delete(this as unknown as PoolClient));
    }
  }
  return new PostgresDatabase(new pg.Pool({ ...settings, Client: TrackedClient }), address, options, made);
}

/**
 * A PostgreSQL database under Kysely's PostgresDialect (which compiles every statement), each
 * step sent through the pool's connection in pipeline mode: a step's BEGIN, statements and COMMIT
 * in one round trip. A step that loses its connection runs again from its start once the database
 * answers, for at most reconnectWithinMs (docs/shared-ledger.md: every step may run twice); one
 * that never reached the database since opening fails at once. Each step commits before it
 * returns: there is no group commit (a shared ledger's readers are other runners).
 */
export class PostgresDatabase implements LedgerDatabase {
  // A database runners on many machines share, holding many batches.
  readonly capabilities: LedgerCapabilities = {
    severalRunners: true,
    storesDefinitions: true,
    servicePerBatch: true,
    jobCreationTimes: true,
  };
  readonly sql = PARTS;
  readonly q: Kysely<Tables>;
  /** Times this ledger waited for the database's answer: the bench's round trips. */
  roundTrips = 0;
  /** Statements sent, BEGIN and COMMIT among them. */
  statements = 0;
  readonly #queue = new StepQueue();
  readonly #writes = new WriteGroups(
    this.#queue,
    (statements) => this.batch(statements),
    (error) => error instanceof DatabaseLostError,
  );
  readonly #pool: Pool;
  readonly #address: string;
  readonly #options: PostgresOptions;
  readonly #clients = new Set<PoolClient>();
  /** Statement texts by the name each is prepared under (#nameOf). */
  readonly #names = new Map<string, string>();
  readonly #made: Set<PoolClient>;
  #answered = false;
  #lost = false;
  /**
   * When the database stopped answering, while it has not answered since: one outage for every
   * step that meets it, so the wait is said once and all of them give up at the same moment.
   */
  #outageSince: number | undefined;
  #closed = false;

  constructor(pool: Pool, address: string, options: PostgresOptions, made: Set<PoolClient>) {
    this.#pool = pool;
    this.#made = made;
    this.#address = address;
    this.#options = options;
    this.q = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
    // An idle connection the server ends is dropped by the pool; the next step connects again.
    pool.on('error', () => {});
    pool.on('connect', (client) => {
      // A connection cut while a step holds it fails that step's query (which retries); the
      // client's own 'error' event must not end the process.
      client.on('error', () => {});
      this.#clients.add(client);
    });
    pool.on('remove', (client) => this.#clients.delete(client));
  }

  /** Where the database is: host and port, as messages name it. */
  get address(): string {
    return this.#address;
  }

  step<T>(work: () => Promise<T>): Promise<T> {
    return this.#queue.run(work);
  }

  batch(statements: readonly Statement[]): Promise<StatementResult[]> {
    if (statements.length === 1) return this.#retrying((client) => this.#send(client, statements));
    return this.#retrying(async (client) =>
      (await this.#send(client, [BEGIN, ...statements, COMMIT])).slice(1, -1),
    );
  }

  async fileSettings(): Promise<null> {
    return null;
  }

  async integrityCheck(): Promise<null> {
    return null;
  }

  write<T>(statements: readonly Statement[], parse: (results: StatementResult[]) => T): Promise<T> {
    return this.#writes.write(statements, parse);
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#retrying(async (client) => {
      let begun = false;
      let ended = false;
      const tx: Tx = {
        run: async (statements, last = false) => {
          const first = begun ? 0 : 1;
          const sent = [...(begun ? [] : [BEGIN]), ...statements, ...(last ? [COMMIT] : [])];
          begun = true;
          ended = last;
          return (await this.#send(client, sent)).slice(first, first + statements.length);
        },
      };
      try {
        const result = await work(tx);
        if (begun && !ended) await this.#send(client, [COMMIT]);
        return result;
      } catch (error) {
        if (begun && !ended && !isLost(error)) await this.#send(client, [ROLLBACK]).catch(() => {});
        throw error;
      }
    });
  }

  async read<R>(statement: CompiledQuery<R>): Promise<R[]> {
    const [result] = await this.#retrying((client) => this.#send(client, [statement]));
    return result!.rows as R[];
  }

  groupCommits(_withinMs: number): void {
    // Every step commits at once: a shared ledger's readers are other runners, who must see it.
  }

  flush(): Promise<void> {
    return this.step(async () => {});
  }

  committed(): Promise<void> {
    // Every step commits before it returns.
    return this.flush();
  }

  close(): Promise<void> {
    return this.step(async () => {
      if (this.#closed) return;
      this.#closed = true;
      if (CLOSED.hasSubscribers) CLOSED.publish({ roundTrips: this.roundTrips, statements: this.statements });
      const ended = this.#pool.end().then(
        () => true,
        () => true,
      );
      // A database that went away may never answer a goodbye: its sockets are cut instead.
      if (this.#lost || !(await within(ended, CLOSE_WAIT_MS)))
        for (const client of this.#clients) socketOf(client)?.destroy();
      // A client that never joined the pool (its login failed) is not the pool's to end.
      for (const client of this.#made) socketOf(client)?.destroy();
    });
  }

  /** The statements sent at once, answered in order; the first that failed fails them all. */
  async #send(client: PoolClient, statements: readonly Statement[]): Promise<StatementResult[]> {
    this.roundTrips += 1;
    this.statements += statements.length;
    // pg writes each statement to the socket as it is given; corked, the step goes out in one write.
    const socket = socketOf(client);
    socket?.cork();
    let sent: Array<Promise<{ rows: unknown[]; rowCount: number | null }>>;
    try {
      sent = statements.map((each) =>
        client.query({ name: this.#nameOf(each), text: each.sql, values: each.parameters as unknown[] }),
      );
    } finally {
      socket?.uncork();
    }
    const settled = await Promise.allSettled(sent);
    const failed = settled.find((each) => each.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((each) => {
      const { rows, rowCount } = (each as PromiseFulfilledResult<Awaited<(typeof sent)[number]>>).value;
      return { rows: rows ?? [], changes: rowCount ?? 0 } as StatementResult;
    });
  }

  /**
   * A name for a statement of few parameters, so that each connection parses and plans it once
   * and runs its prepared plan after (pg keeps the names a connection has prepared). Admission's
   * statements are a few hundred a turn with the same text: planned each time, they cost the
   * server more than they took to run, under the batch's lock (docs/performance.md). A list of
   * many values (a page of ids) gets no name: its texts are as many as the lists' lengths; nor
   * does one without parameters (BEGIN, a migration's several commands), sent as simple text.
   */
  #nameOf(statement: Statement): string | undefined {
    const count = statement.parameters.length;
    if (count === 0 || count > NAMED_MAX_PARAMETERS) return undefined;
    let name = this.#names.get(statement.sql);
    if (name === undefined) {
      name = `mb${this.#names.size + 1}`;
      this.#names.set(statement.sql, name);
    }
    return name;
  }

  /**
   * Runs `work` on the pool's connection until it gets through, for at most reconnectWithinMs
   * counted from when the database stopped answering (not from when this step began).
   */
  async #retrying<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error('the ledger is closed');
    let conflicts = 0;
    for (;;) {
      let client: PoolClient | null = null;
      try {
        client = await this.#pool.connect();
        const result = await work(client);
        client.release();
        this.#answered = true;
        this.#outageSince = undefined;
        return result;
      } catch (error) {
        const lost = isLost(error);
        client?.release(lost ? (error as Error) : undefined);
        if (!lost) {
          const answer = asDatabaseError(error);
          // Rolled back for meeting another runner's step: it runs again, after a pause that
          // keeps the two apart (every step may run twice, docs/shared-ledger.md).
          if (!isConflict(answer) || ++conflicts > CONFLICT_TRIES) throw answer;
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * conflicts));
          continue;
        }
        if (!this.#answered)
          throw new DatabaseLostError(`could not connect to ${this.#address}: ${messageOf(error)}`);
        if (this.#outageGone()) {
          this.#lost = true;
          throw new DatabaseLostError(
            `the database at ${this.#address} stopped answering: ${messageOf(error)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  }

  /** Marks the outage's start (said once) and whether its wait is over. */
  #outageGone(): boolean {
    const now = Date.now();
    const first = this.#outageSince === undefined;
    this.#outageSince ??= now;
    const gone = now - this.#outageSince >= this.#options.reconnectWithinMs;
    if (first && !gone) this.#options.onWaiting?.(this.#options.reconnectWithinMs);
    return gone;
  }
}

/** Whether `promise` settles within `ms`; the timer never keeps the process alive. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

function socketOf(client: PoolClient): Socket | undefined {
  return (client as unknown as { connection?: { stream?: Socket } }).connection?.stream;
}
