import { listAttempts } from './attempt-reads.js';
import { listItems } from './item-rows.js';
import { insertKeepers, keepers } from './keeper-rows.js';
import type { LedgerConnection } from './ledger-connection.js';
import type { BatchDump, EventRecord, FileRecord, RunRecord } from './records.js';
import { boundService } from './service-binding.js';

/**
 * A whole batch out of, and into, a SQLite ledger (records.ts, BatchDump): what `mediabatch
 * copy-ledger` moves between SQLite and PostgreSQL. The service binding here is the file's one row
 * (`service`), where PostgreSQL keeps it on the batch's row.
 */

export function dumpBatch(c: LedgerConnection): BatchDump {
  const batch = c.db
    .prepare('SELECT name, manifest_path AS manifestPath, created_at AS createdAt FROM batches WHERE id = ?')
    .get(c.batchId) as BatchDump['batch'] | undefined;
  if (batch === undefined) throw new Error('the ledger records no such batch');
  // A ledger opened read-only may predate a column: its files then have no recorded time.
  const mtime = c.hasColumn('files', 'mtime_ms') ? 'f.mtime_ms' : 'NULL';
  const files = c
    .prepare(
      `SELECT f.attempt_id AS attemptId, f.idx, f.path, f.bytes, f.sha256, f.saved_at AS savedAt, ${mtime} AS mtimeMs
         FROM files f JOIN attempts a ON a.id = f.attempt_id WHERE a.batch_id = ? ORDER BY f.attempt_id, f.idx`,
    )
    .all(c.batchId) as BatchDump['files'];
  // The stored form as this ledger would store it now: an old absolute path inside the folder the
  // batch's row recorded (a ledger never migrated) becomes relative, as a migration would make it.
  for (const file of files) file.path = c.paths.stored(c.paths.absolute(file.path));
  const events = c
    .prepare(
      `SELECT at, item_id AS itemId, attempt_id AS attemptId, kind, detail FROM events WHERE batch_id = ? ORDER BY id`,
    )
    .all(c.batchId) as EventRecord[];
  const runs = c
    .prepare(
      `SELECT pid, NULL AS runner, started_at AS startedAt, ended_at AS endedAt, exit_code AS exitCode
         FROM runs WHERE batch_id = ? ORDER BY id`,
    )
    .all(c.batchId) as RunRecord[];
  const attempts = listAttempts(c).map((attempt) => ({
    ...attempt,
    take: attempt.take ?? 1,
    vars: attempt.vars ?? null,
  }));
  return {
    batch,
    service: boundService(c),
    items: listItems(c).sort(byItemId),
    attempts,
    files,
    events,
    runs,
    keepers: keepers(c),
  };
}

/**
 * Loads `dump` into this batch, which must record no item and no attempt, in one transaction:
 * all of it or none. Attempts get this file's ids; files and events follow them.
 */
export function loadBatch(c: LedgerConnection, dump: BatchDump): void {
  c.write(() => {
    const held = c
      .prepare(
        'SELECT (SELECT COUNT(*) FROM items WHERE batch_id = ?) + (SELECT COUNT(*) FROM attempts WHERE batch_id = ?) AS n',
      )
      .get(c.batchId, c.batchId) as { n: number };
    if (held.n > 0) throw new Error(`the ledger already records items or attempts of ${dump.batch.name}`);
    bindDumpedService(c, dump);
    c.prepare('UPDATE batches SET manifest_path = ?, created_at = ? WHERE id = ?').run(
      dump.batch.manifestPath,
      dump.batch.createdAt,
      c.batchId,
    );
    const insertItem = c.prepare(
      `INSERT INTO items (batch_id, item_id, request_hash, state, retries_used, error_code, error_message, updated_at)
         VALUES (@batchId, @itemId, @requestHash, @state, @retriesUsed, @errorCode, @errorMessage, @updatedAt)`,
    );
    for (const item of dump.items) insertItem.run({ batchId: c.batchId, ...item });
    const ids = insertAttempts(c, dump.attempts);
    const insertFile = c.prepare(
      `INSERT INTO files (attempt_id, idx, path, bytes, sha256, saved_at, mtime_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const file of dump.files)
      insertFile.run(
        attemptIdIn(ids, file),
        file.idx,
        file.path,
        file.bytes,
        file.sha256,
        file.savedAt,
        file.mtimeMs,
      );
    const insertEvent = c.prepare(
      'INSERT INTO events (at, batch_id, item_id, attempt_id, kind, detail) VALUES (?, ?, ?, ?, ?, ?)',
    );
    for (const event of dump.events) {
      const attemptId = event.attemptId === null ? null : (ids.get(event.attemptId) ?? null);
      insertEvent.run(event.at, c.batchId, event.itemId, attemptId, event.kind, event.detail);
    }
    const insertRun = c.prepare(
      'INSERT INTO runs (batch_id, pid, started_at, ended_at, exit_code) VALUES (?, ?, ?, ?, ?)',
    );
    for (const run of dump.runs) insertRun.run(c.batchId, run.pid, run.startedAt, run.endedAt, run.exitCode);
    insertKeepers(c, dump.keepers);
  });
}

/** The attempts, in the dump's order; returns each dumped id's new one. */
function insertAttempts(c: LedgerConnection, attempts: BatchDump['attempts']): Map<number, number> {
  const insert = c.prepare(
    `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros,
       state, http_status, http_code, job_id, job_status, amount_micros, refunded_micros, error_code,
       error_message, expires_at, files_saved, created_at, answered_at, completed_at, take, vars)
     VALUES (@batchId, @itemId, @seq, @idempotencyKey, @requestBody, @requestHash, @reservedMicros,
       @state, @httpStatus, @httpCode, @jobId, @jobStatus, @amountMicros, @refundedMicros, @errorCode,
       @errorMessage, @expiresAt, @filesSaved, @createdAt, @answeredAt, @completedAt, @take, @vars)`,
  );
  const ids = new Map<number, number>();
  for (const { id, ...attempt } of attempts) {
    const info = insert.run({ ...attempt, batchId: c.batchId, filesSaved: attempt.filesSaved ? 1 : 0 });
    ids.set(id, Number(info.lastInsertRowid));
  }
  return ids;
}

/** Items in one order whatever the database's collation: two dumps of one batch compare equal. */
export function byItemId(a: { itemId: string }, b: { itemId: string }): number {
  return a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0;
}

/** A file's attempt under its new id; a dump whose files name an attempt it lacks is not a batch's. */
export function attemptIdIn(ids: ReadonlyMap<number, number>, file: Pick<FileRecord, 'attemptId'>): number {
  const id = ids.get(file.attemptId);
  if (id === undefined)
    throw new Error(`the dump's files name attempt ${file.attemptId}, which it does not hold`);
  return id;
}

/**
 * The file's one service row: set from the dump when the file has none; a file already bound to
 * another service is refused (its other batches' jobs are that service's).
 */
function bindDumpedService(c: LedgerConnection, dump: BatchDump): void {
  if (dump.service === null) return;
  const bound = boundService(c);
  if (bound !== null && bound.identity !== dump.service.identity)
    throw new Error(`the ledger belongs to ${bound.identity}, the batch to ${dump.service.identity}`);
  c.prepare('INSERT OR REPLACE INTO service (id, identity, bound_at) VALUES (1, ?, ?)').run(
    dump.service.identity,
    dump.service.boundAt,
  );
}
