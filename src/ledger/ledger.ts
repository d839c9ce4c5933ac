import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database, { type Database as Db, type Statement } from 'better-sqlite3';
import { migrate } from './migrations.js';
import type {
  AttemptRecord,
  FileRecord,
  ItemRecord,
  ItemState,
  JobSnapshot,
  MoneyTotals,
  ServiceBinding,
} from './records.js';

export interface NewAttempt {
  itemId: string;
  seq: number;
  idempotencyKey: string;
  requestBody: string;
  requestHash: string;
  reservedMicros: number;
  /** Default 1; a redo prepares the next take. */
  take?: number;
}

export interface ItemUpdate {
  state: ItemState;
  requestHash?: string;
  retriesUsed?: number;
  errorCode?: string | null;
  errorMessage?: string | null;
}

/**
 * The durable record of one batch. Every method is one transaction, so a kill at any instant
 * leaves either the whole step or none of it. The API key never passes through here.
 */
export class Ledger {
  readonly path: string;
  readonly batchId: number;
  readonly #db: Db;
  readonly #now: () => Date;
  readonly #statements = new Map<string, Statement>();
  /** Runs one step as a transaction, or a savepoint inside the open one (see #write). */
  readonly #step: (work: () => unknown) => unknown;
  #hasTakes: boolean | undefined;
  #groupMs: number | null = null;
  #flushTimer: NodeJS.Timeout | null = null;
  #flushError: unknown = null;

  private constructor(path: string, db: Db, batchId: number, now: () => Date) {
    this.path = path;
    this.#db = db;
    this.batchId = batchId;
    this.#now = now;
    // Made once: each transaction() call builds four wrapper functions, a few per ledger step.
    this.#step = db.transaction((work: () => unknown) => work());
  }

  /** Opens (creating with mode 0600 when new) and migrates the ledger, and finds or adds the batch. */
  static open(
    path: string,
    batchName: string,
    manifestPath: string,
    options: { now?: () => Date; readonly?: boolean } = {},
  ): Ledger {
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
        migrate(db);
      }
      const found = db.prepare('SELECT id FROM batches WHERE name = ?').get(batchName) as
        | { id: number }
        | undefined;
      let batchId = found?.id;
      if (batchId === undefined) {
        if (options.readonly) batchId = -1;
        else {
          const info = db
            .prepare('INSERT INTO batches (name, manifest_path, created_at) VALUES (?, ?, ?)')
            .run(batchName, manifestPath, now().toISOString());
          batchId = Number(info.lastInsertRowid);
        }
      }
      return new Ledger(path, db, batchId, now);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  close(): void {
    if (!this.#db.open) return;
    this.flush();
    this.#db.close();
  }

  /**
   * Runs `work` as one transaction: the ledger steps inside it commit together, with one disk sync
   * (synchronous=FULL) instead of one each, and a failure leaves none of them.
   */
  atomically<T>(work: () => T): T {
    return this.#write(work);
  }

  /**
   * Group commit (docs/performance.md): from now on, steps that a re-run can redo safely (answers,
   * job states, saved files, item states) join one open transaction, committed with one disk sync
   * at most `withinMs` later, or at once by the next write-ahead step. prepareAttempt alone is
   * committed before it returns: an attempt's key and body are durable before its POST.
   */
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
    if (this.#db.open && this.#db.inTransaction) this.#db.exec('COMMIT');
  }

  /** One step, atomic on its own (a savepoint inside an open group), durable at once if `durable`. */
  #write<T>(work: () => T, durable = false): T {
    if (this.#groupMs === null) return this.#step(work) as T;
    if (this.#flushError !== null) this.flush();
    if (!this.#db.inTransaction) {
      this.#db.exec('BEGIN IMMEDIATE');
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

  /** Each SQL text is compiled once: compiling per call was an eighth of a 5,000-item run's CPU. */
  #prepare(source: string): Statement {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.#db.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  }

  /** The durability settings in force on this connection (synchronous 2 is FULL). */
  settings(): { journalMode: string; synchronous: number } {
    return {
      journalMode: this.#db.pragma('journal_mode', { simple: true }) as string,
      synchronous: this.#db.pragma('synchronous', { simple: true }) as number,
    };
  }

  integrityCheck(): string {
    return this.#db.pragma('integrity_check', { simple: true }) as string;
  }

  // ---- items -------------------------------------------------------------------------------

  listItems(): ItemRecord[] {
    return this.#prepare(
      `SELECT item_id AS itemId, request_hash AS requestHash, state, retries_used AS retriesUsed,
                  error_code AS errorCode, error_message AS errorMessage, updated_at AS updatedAt
           FROM items WHERE batch_id = ?`,
    ).all(this.batchId) as ItemRecord[];
  }

  /** Inserts or rewrites many items at once (manifest sync); one transaction for all of them. */
  putItems(items: ReadonlyArray<{ itemId: string } & ItemUpdate>): void {
    const at = this.#now().toISOString();
    const upsert = this.#prepare(
      `INSERT INTO items (batch_id, item_id, request_hash, state, retries_used, error_code, error_message, updated_at)
       VALUES (@batchId, @itemId, @requestHash, @state, @retriesUsed, @errorCode, @errorMessage, @at)
       ON CONFLICT (batch_id, item_id) DO UPDATE SET request_hash = excluded.request_hash, state = excluded.state,
         retries_used = excluded.retries_used, error_code = excluded.error_code,
         error_message = excluded.error_message, updated_at = excluded.updated_at`,
    );
    this.#write(() => {
      for (const item of items) {
        upsert.run({
          batchId: this.batchId,
          itemId: item.itemId,
          requestHash: item.requestHash ?? '',
          state: item.state,
          retriesUsed: item.retriesUsed ?? 0,
          errorCode: item.errorCode ?? null,
          errorMessage: item.errorMessage ?? null,
          at,
        });
      }
    });
  }

  setItemState(itemId: string, update: ItemUpdate, event?: { kind: string; detail?: unknown }): void {
    this.#write(() => {
      this.#prepare(
        `UPDATE items SET state = @state,
             request_hash = COALESCE(@requestHash, request_hash),
             retries_used = COALESCE(@retriesUsed, retries_used),
             error_code = @errorCode, error_message = @errorMessage, updated_at = @at
           WHERE batch_id = @batchId AND item_id = @itemId`,
      ).run({
        batchId: this.batchId,
        itemId,
        state: update.state,
        requestHash: update.requestHash ?? null,
        retriesUsed: update.retriesUsed ?? null,
        errorCode: update.errorCode ?? null,
        errorMessage: update.errorMessage ?? null,
        at: this.#now().toISOString(),
      });
      this.#event(
        itemId,
        null,
        event?.kind ?? `item_${update.state}`,
        event?.detail ?? update.errorCode ?? null,
      );
    });
  }

  // ---- attempts ----------------------------------------------------------------------------

  /**
   * Every attempt of the batch, with as many of its columns as `view` asks for (see AttemptView).
   */
  listAttempts(options: { view?: AttemptView } = {}): AttemptRecord[] {
    const select = this.#select(ATTEMPT_VIEWS[options.view ?? 'full']);
    const rows = this.#prepare(`${select} WHERE batch_id = ? ORDER BY id`).all(this.batchId) as AttemptRow[];
    return rows.map(toAttempt);
  }

  getAttempt(id: number): AttemptRecord {
    return toAttempt(this.#prepare(`${this.#select(ATTEMPT_SELECT)} WHERE id = ?`).get(id) as AttemptRow);
  }

  /** A ledger opened read-only is never migrated: one written before takes reads as take 1. */
  #select(select: string): string {
    if (this.#hasTakes === undefined) {
      const columns = this.#db.pragma('table_info(attempts)') as Array<{ name: string }>;
      this.#hasTakes = columns.some((column) => column.name === 'take');
    }
    return this.#hasTakes ? select : select.replace(' take FROM', ' 1 AS take FROM');
  }

  /** Write-ahead: the key, exact body and reservation are durable before the POST is sent. */
  prepareAttempt(attempt: NewAttempt): AttemptRecord {
    return this.prepareAttempts([attempt])[0]!;
  }

  /** Several attempts made durable together, with one disk sync: each before its own POST. */
  prepareAttempts(attempts: readonly NewAttempt[]): AttemptRecord[] {
    return this.#write(() => attempts.map((attempt) => this.#insertAttempt(attempt)), true);
  }

  #insertAttempt(attempt: NewAttempt): AttemptRecord {
    const at = this.#now().toISOString();
    const info = this.#prepare(
      `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros, state, created_at, take)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'prepared', ?, ?)`,
    ).run(
      this.batchId,
      attempt.itemId,
      attempt.seq,
      attempt.idempotencyKey,
      attempt.requestBody,
      attempt.requestHash,
      attempt.reservedMicros,
      at,
      attempt.take ?? 1,
    );
    const id = Number(info.lastInsertRowid);
    this.#prepare(
      `UPDATE items SET state = 'in_flight', updated_at = ? WHERE batch_id = ? AND item_id = ?`,
    ).run(at, this.batchId, attempt.itemId);
    this.#event(attempt.itemId, id, 'attempt_prepared', {
      seq: attempt.seq,
      reserved: attempt.reservedMicros,
      ...(attempt.take && attempt.take > 1 ? { take: attempt.take } : {}),
    });
    // The row as getAttempt would read it back: a query and a 22-property row object spared per attempt.
    return {
      id,
      itemId: attempt.itemId,
      seq: attempt.seq,
      idempotencyKey: attempt.idempotencyKey,
      requestBody: attempt.requestBody,
      requestHash: attempt.requestHash,
      reservedMicros: attempt.reservedMicros,
      state: 'prepared',
      httpStatus: null,
      httpCode: null,
      jobId: null,
      jobStatus: null,
      amountMicros: 0,
      refundedMicros: 0,
      errorCode: null,
      errorMessage: null,
      expiresAt: null,
      filesSaved: false,
      createdAt: at,
      answeredAt: null,
      completedAt: null,
      take: attempt.take ?? 1,
    };
  }

  /** False for a new ledger (or one whose runs never got as far as preparing a request). */
  hasAttempts(): boolean {
    return this.#prepare('SELECT 1 FROM attempts WHERE batch_id = ? LIMIT 1').get(this.batchId) !== undefined;
  }

  /**
   * A job found on the service by `mediabatch import` (docs/import.md), recorded as an accepted
   * attempt so that spend, budget and resumption see it as if this ledger had submitted it. Its
   * real Idempotency-Key is unknown; the placeholder is never sent, since an accepted attempt is
   * never resent.
   */
  recordImportedJob(imported: {
    itemId: string;
    seq: number;
    requestBody: string;
    requestHash: string;
    job: JobSnapshot;
  }): AttemptRecord {
    return this.#db.transaction(() => {
      const at = this.#now().toISOString();
      const info = this.#prepare(
        `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros, state, created_at, answered_at)
           VALUES (?, ?, ?, ?, ?, ?, 0, 'accepted', ?, ?)`,
      ).run(
        this.batchId,
        imported.itemId,
        imported.seq,
        `imported:${imported.job.jobId}`,
        imported.requestBody,
        imported.requestHash,
        at,
        at,
      );
      const id = Number(info.lastInsertRowid);
      this.#updateJob(id, imported.job);
      this.#event(imported.itemId, id, 'job_imported', {
        job: imported.job.jobId,
        status: imported.job.status,
        amount: imported.job.amountMicros,
      });
      return this.getAttempt(id);
    })();
  }

  /** The service answered with a job (202, a replay, or an adoption after reconciliation). */
  recordAccepted(attemptId: number, httpStatus: number | null, job: JobSnapshot): AttemptRecord {
    return this.#write(() => {
      this.#prepare(
        `UPDATE attempts SET state = 'accepted', reserved_micros = 0, http_status = ?, answered_at = COALESCE(answered_at, ?)
           WHERE id = ?`,
      ).run(httpStatus, this.#now().toISOString(), attemptId);
      this.#updateJob(attemptId, job);
      const attempt = this.getAttempt(attemptId);
      this.#event(attempt.itemId, attemptId, 'job_accepted', {
        job: job.jobId,
        status: job.status,
        amount: job.amountMicros,
      });
      return attempt;
    });
  }

  /** The service refused the request with an HTTP error: no job, no charge, reservation released. */
  recordRejected(attemptId: number, httpStatus: number, code: string | null, message: string): AttemptRecord {
    return this.#write(() => {
      this.#prepare(
        `UPDATE attempts SET state = 'rejected', reserved_micros = 0, http_status = ?, http_code = ?,
             error_code = ?, error_message = ?, answered_at = ? WHERE id = ?`,
      ).run(httpStatus, code, code, message, this.#now().toISOString(), attemptId);
      const attempt = this.getAttempt(attemptId);
      this.#event(attempt.itemId, attemptId, 'attempt_rejected', { status: httpStatus, code });
      return attempt;
    });
  }

  /** A later view of an accepted job (status, refund, expiry). */
  recordJob(attemptId: number, job: JobSnapshot): AttemptRecord {
    return this.#write(() => {
      const before = this.getAttempt(attemptId);
      this.#updateJob(attemptId, job);
      if (before.jobStatus !== job.status) {
        this.#event(before.itemId, attemptId, 'job_status', { status: job.status, error: job.errorCode });
      }
      return this.getAttempt(attemptId);
    });
  }

  #updateJob(attemptId: number, job: JobSnapshot): void {
    this.#prepare(
      `UPDATE attempts SET job_id = ?, job_status = ?, amount_micros = ?, refunded_micros = ?,
           error_code = ?, error_message = ?, expires_at = ?, completed_at = ? WHERE id = ?`,
    ).run(
      job.jobId,
      job.status,
      job.amountMicros,
      job.refundedMicros,
      job.errorCode,
      job.errorMessage,
      job.expiresAt,
      job.completedAt,
      attemptId,
    );
  }

  // ---- files -------------------------------------------------------------------------------

  listFiles(): FileRecord[] {
    return this.#prepare(
      `SELECT f.attempt_id AS attemptId, f.idx, f.path, f.bytes, f.sha256, f.saved_at AS savedAt
         FROM files f JOIN attempts a ON a.id = f.attempt_id WHERE a.batch_id = ? ORDER BY f.attempt_id, f.idx`,
    ).all(this.batchId) as FileRecord[];
  }

  /** Every file of an attempt, saved and verified, and the attempt marked complete, in one step. */
  recordFilesSaved(attemptId: number, files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>): void {
    this.#write(() => {
      const at = this.#now().toISOString();
      const insert = this.#prepare(
        `INSERT OR REPLACE INTO files (attempt_id, idx, path, bytes, sha256, saved_at) VALUES (?, ?, ?, ?, ?, ?)`,
      );
      for (const file of files) insert.run(attemptId, file.idx, file.path, file.bytes, file.sha256, at);
      this.#prepare('UPDATE attempts SET files_saved = 1 WHERE id = ?').run(attemptId);
      const owner = this.#prepare('SELECT item_id AS itemId FROM attempts WHERE id = ?').get(attemptId);
      this.#event((owner as { itemId: string }).itemId, attemptId, 'files_saved', { count: files.length });
    });
  }

  /** An earlier take's file now lives under a new name (kept beside the newer take). */
  recordFileMoved(attemptId: number, idx: number, path: string): void {
    this.#write(() => {
      this.#prepare('UPDATE files SET path = ? WHERE attempt_id = ? AND idx = ?').run(path, attemptId, idx);
      const attempt = this.getAttempt(attemptId);
      this.#event(attempt.itemId, attemptId, 'file_moved', { idx, path });
    });
  }

  // ---- service -----------------------------------------------------------------------------

  /**
   * The service this ledger belongs to, or null while none has answered a run's pre-flight. A
   * ledger opened read-only at an older schema has no such table yet: it is unbound too.
   */
  service(): ServiceBinding | null {
    const table = this.#db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'service'")
      .get();
    if (!table) return null;
    const row = this.#db.prepare('SELECT identity, bound_at AS boundAt FROM service WHERE id = 1').get() as
      | ServiceBinding
      | undefined;
    return row ?? null;
  }

  /** Binds the ledger to `identity` once; a ledger already bound keeps its service. */
  bindService(identity: string): ServiceBinding {
    this.#db.transaction(() => {
      const info = this.#prepare(
        'INSERT OR IGNORE INTO service (id, identity, bound_at) VALUES (1, ?, ?)',
      ).run(identity, this.#now().toISOString());
      if (info.changes > 0) this.#event(null, null, 'service_bound', { service: identity });
    })();
    return this.service()!;
  }

  // ---- money, runs, events -----------------------------------------------------------------

  /** The sums of moneyTotalsOf (money-totals.ts), in SQL: the runner asks before every submission. */
  moneyTotals(): MoneyTotals {
    const row = this.#prepare(
      `SELECT COALESCE(SUM(amount_micros), 0) AS chargedMicros, COALESCE(SUM(refunded_micros), 0) AS refundedMicros,
                COALESCE(SUM(CASE WHEN state = 'prepared' THEN reserved_micros ELSE 0 END), 0) AS reservedMicros
         FROM attempts WHERE batch_id = ?`,
    ).get(this.batchId) as MoneyTotals;
    return row;
  }

  startRun(pid: number): number {
    const info = this.#prepare('INSERT INTO runs (batch_id, pid, started_at) VALUES (?, ?, ?)').run(
      this.batchId,
      pid,
      this.#now().toISOString(),
    );
    return Number(info.lastInsertRowid);
  }

  endRun(runId: number, exitCode: number): void {
    this.#prepare('UPDATE runs SET ended_at = ?, exit_code = ? WHERE id = ?').run(
      this.#now().toISOString(),
      exitCode,
      runId,
    );
  }

  lastRun(): { pid: number; startedAt: string } | null {
    const row = this.#prepare(
      'SELECT pid, started_at AS startedAt FROM runs WHERE batch_id = ? ORDER BY id DESC LIMIT 1',
    ).get(this.batchId) as { pid: number; startedAt: string } | undefined;
    return row ?? null;
  }

  appendEvent(itemId: string | null, attemptId: number | null, kind: string, detail?: unknown): void {
    this.#event(itemId, attemptId, kind, detail ?? null);
  }

  #event(itemId: string | null, attemptId: number | null, kind: string, detail: unknown): void {
    this.#prepare(
      'INSERT INTO events (at, batch_id, item_id, attempt_id, kind, detail) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(
      this.#now().toISOString(),
      this.batchId,
      itemId,
      attemptId,
      kind,
      detail === null ? null : JSON.stringify(detail),
    );
  }
}

interface AttemptRow extends Omit<AttemptRecord, 'filesSaved'> {
  filesSaved: number;
}

const ATTEMPT_SELECT = `SELECT id, item_id AS itemId, seq, idempotency_key AS idempotencyKey, request_body AS requestBody,
  request_hash AS requestHash, reserved_micros AS reservedMicros, state, http_status AS httpStatus, http_code AS httpCode,
  job_id AS jobId, job_status AS jobStatus, amount_micros AS amountMicros, refunded_micros AS refundedMicros,
  error_code AS errorCode, error_message AS errorMessage, expires_at AS expiresAt, files_saved AS filesSaved,
  created_at AS createdAt, answered_at AS answeredAt, completed_at AS completedAt, take FROM attempts`;

/**
 * How much of each attempt a reader needs. At 100,000 items the text columns are most of the
 * memory: `summary` leaves them empty (status), `pricing` keeps only the part of each request body
 * that prices it (plan's estimates); resends and the report read everything.
 */
export type AttemptView = 'full' | 'summary' | 'pricing';

const BLANKED_IN_SUMMARY = [
  'idempotency_key AS',
  'request_hash AS',
  'error_message AS',
  'created_at AS',
  'answered_at AS',
  'completed_at AS',
];

const SUMMARY_SELECT = BLANKED_IN_SUMMARY.reduce(
  (select, column) => select.replace(column, "'' AS"),
  ATTEMPT_SELECT.replace('request_body AS', "'' AS"),
);

const PRICE_BODY = `CASE WHEN json_valid(request_body) THEN json_object(
  'model', json_extract(request_body, '$.model'),
  'input', json_object('seconds', json_extract(request_body, '$.input.seconds'),
                       'definition', json_extract(request_body, '$.input.definition'))) ELSE '' END AS`;

const ATTEMPT_VIEWS: Record<AttemptView, string> = {
  full: ATTEMPT_SELECT,
  summary: SUMMARY_SELECT,
  pricing: SUMMARY_SELECT.replace("'' AS requestBody", `${PRICE_BODY} requestBody`),
};

/** Converts in place: copying 100,000 rows costs more than reading them. */
function toAttempt(row: AttemptRow): AttemptRecord {
  const record = row as unknown as AttemptRecord;
  record.filesSaved = row.filesSaved === 1;
  return record;
}
