import { sql } from 'kysely';
import { listAttempts } from './attempt-reads.js';
import { definitionRows, dumpedDefinitions } from './definitions.js';
import type { Statement, Tx } from './dialect/database.js';
import { listFiles } from './file-rows.js';
import { listItems } from './item-rows.js';
import { keepers } from './keeper-rows.js';
import type { LedgerContext } from './ledger-context.js';
import type { BatchDump, EventRecord, FileRecord, RunRecord } from './records.js';
import { boundService, boundServiceIn, dumpedServiceStatements } from './service-binding.js';
import type { Tables } from './tables.js';
import { takeChecks } from './take-checks.js';

/**
 * A whole batch out of, and into, a ledger (records.ts, BatchDump): what `mediabatch copy-ledger`
 * moves between SQLite and PostgreSQL. Leases and heartbeats are a live runner's state, left out
 * both ways, so a copied run never counts as a live runner.
 */

export async function dumpBatch(c: LedgerContext): Promise<BatchDump> {
  const [batch] = c.none
    ? []
    : await c.db.read(
        c.q
          .selectFrom('batches')
          .select(['name', 'manifest_path as manifestPath', 'created_at as createdAt'])
          .where('id', '=', c.batchId)
          .compile(),
      );
  if (batch === undefined) throw new Error('the ledger records no such batch');
  return {
    batch,
    service: await boundService(c),
    items: (await listItems(c)).sort(byItemId),
    attempts: (await listAttempts(c)).map((attempt) => ({
      ...attempt,
      take: attempt.take ?? 1,
      vars: attempt.vars ?? null,
    })),
    files: await dumpedFiles(c),
    events: await c.db.read(
      c.q
        .selectFrom('events')
        .select(['at', 'item_id as itemId', 'attempt_id as attemptId', 'kind', 'detail'])
        .where('batch_id', '=', c.batchId)
        .orderBy('id')
        .compile(),
    ),
    runs: (await c.db.read(
      c.q
        .selectFrom('runs')
        .select([
          'pid',
          c.can.severalRunners ? 'runner' : sql<string | null>`null`.as('runner'),
          'started_at as startedAt',
          'ended_at as endedAt',
          'exit_code as exitCode',
        ])
        .where('batch_id', '=', c.batchId)
        .orderBy('id')
        .compile(),
    )) as RunRecord[],
    keepers: await keepers(c),
    takeChecks: await takeChecks(c),
    definitions: await dumpedDefinitions(c),
  };
}

/**
 * The files in their stored form as this ledger would store them now: an old absolute path inside
 * the folder the batch's row recorded (a ledger never migrated) becomes relative, as a migration
 * would make it.
 */
async function dumpedFiles(c: LedgerContext): Promise<BatchDump['files']> {
  // Paths in their stored form (relative to the manifest's folder), as the target stores them.
  return (await listFiles(c)).map((file) => ({
    ...file,
    path: c.paths.stored(file.path),
    mtimeMs: file.mtimeMs ?? null,
  }));
}

/** Rows per statement: a batch of 100,000 attempts is 100 statements, each a bounded message. */
const ROWS_PER_STATEMENT = 500;

/**
 * Loads `dump` into this batch, which must record no item and no attempt, in one transaction
 * (under the batch's lock on PostgreSQL, the one a runner's admission takes: no runner slips an
 * attempt in between the check and the load): all of it or none. Attempts get this database's
 * ids; files and events follow them.
 */
export async function loadBatch(c: LedgerContext, dump: BatchDump): Promise<void> {
  await c.db.transaction(async (tx) => {
    const bound = await checkEmpty(c, tx, dump);
    if (dump.service !== null && bound !== null && bound.identity !== dump.service.identity)
      throw new Error(`the ledger belongs to ${bound.identity}, the batch to ${dump.service.identity}`);
    await tx.run([
      ...(dump.service === null ? [] : dumpedServiceStatements(c, dump.service)),
      c.q
        .updateTable('batches')
        .set({ manifest_path: dump.batch.manifestPath, created_at: dump.batch.createdAt })
        .where('id', '=', c.batchId)
        .compile(),
    ]);
    await insertAll(
      tx,
      c,
      'items',
      dump.items.map((item) => ({
        batch_id: c.batchId,
        item_id: item.itemId,
        request_hash: item.requestHash,
        state: item.state,
        retries_used: item.retriesUsed,
        error_code: item.errorCode,
        error_message: item.errorMessage,
        updated_at: item.updatedAt,
      })),
    );
    const ids = await insertAttempts(c, tx, dump.attempts);
    await insertAll(
      tx,
      c,
      'files',
      dump.files.map((file) => ({
        attempt_id: attemptIdIn(ids, file),
        idx: file.idx,
        path: file.path,
        bytes: file.bytes,
        sha256: file.sha256,
        saved_at: file.savedAt,
        mtime_ms: file.mtimeMs,
      })),
    );
    await insertAll(
      tx,
      c,
      'events',
      dump.events.map((event: EventRecord) => ({
        at: event.at,
        batch_id: c.batchId,
        item_id: event.itemId,
        attempt_id: event.attemptId === null ? null : (ids.get(event.attemptId) ?? null),
        kind: event.kind,
        detail: event.detail,
      })),
    );
    await insertAll(
      tx,
      c,
      'runs',
      dump.runs.map((run) => ({
        batch_id: c.batchId,
        pid: run.pid,
        started_at: run.startedAt,
        ended_at: run.endedAt,
        exit_code: run.exitCode,
        ...(c.can.severalRunners ? { runner: run.runner } : {}),
      })),
    );
    await insertAll(
      tx,
      c,
      'keepers',
      dump.keepers.map((keeper) => ({
        batch_id: c.batchId,
        item_id: keeper.itemId,
        kept_item_id: keeper.keptItemId,
        take: keeper.take,
        chosen_at: keeper.chosenAt,
      })),
    );
    await insertAll(
      tx,
      c,
      'take_checks',
      (dump.takeChecks ?? []).map((check) => ({
        attempt_id: attemptIdIn(ids, check),
        outcome: check.outcome,
        reason: check.reason,
        video: check.video,
        score: check.score ?? null,
        checks: check.checks ?? null,
        checked_at: check.checkedAt,
      })),
    );
    await insertAll(tx, c, 'batch_definitions', definitionRows(c, dump.definitions ?? []));
  });
}

/** The batch's lock taken (PostgreSQL), its emptiness checked, and its service as bound now. */
async function checkEmpty(c: LedgerContext, tx: Tx, dump: BatchDump) {
  const lock = c.db.sql.lockBatch(c.q, c.batchId);
  const count = (table: 'items' | 'attempts') =>
    c.q.selectFrom(table).select('batch_id').where('batch_id', '=', c.batchId).limit(1).compile();
  const results = await tx.run([...(lock ? [lock] : []), count('items'), count('attempts')]);
  const [items, attempts] = results.slice(lock ? 1 : 0);
  if (items!.rows.length + attempts!.rows.length > 0)
    throw new Error(`the ledger already records items or attempts of ${dump.batch.name}`);
  return boundServiceIn(c, tx);
}

/** The attempts, in the dump's order, a chunk per statement; returns each dumped id's new one. */
async function insertAttempts(
  c: LedgerContext,
  tx: Tx,
  attempts: BatchDump['attempts'],
): Promise<Map<number, number>> {
  const ids = new Map<number, number>();
  for (let start = 0; start < attempts.length; start += ROWS_PER_STATEMENT) {
    const chunk = attempts.slice(start, start + ROWS_PER_STATEMENT);
    const keys = new Map(chunk.map((attempt) => [attempt.idempotencyKey, attempt.id]));
    const [result] = await tx.run([
      c.q
        .insertInto('attempts')
        .values(chunk.map((attempt) => attemptRow(c, attempt)))
        .returning(['id', 'idempotency_key as key'])
        .compile(),
    ]);
    for (const row of result!.rows as Array<{ id: number; key: string }>) ids.set(keys.get(row.key)!, row.id);
  }
  return ids;
}

function attemptRow(c: LedgerContext, a: BatchDump['attempts'][number]) {
  return {
    batch_id: c.batchId,
    item_id: a.itemId,
    seq: a.seq,
    idempotency_key: a.idempotencyKey,
    request_body: a.requestBody,
    request_hash: a.requestHash,
    reserved_micros: a.reservedMicros,
    state: a.state,
    http_status: a.httpStatus,
    http_code: a.httpCode,
    job_id: a.jobId,
    job_status: a.jobStatus,
    amount_micros: a.amountMicros,
    refunded_micros: a.refundedMicros,
    error_code: a.errorCode,
    error_message: a.errorMessage,
    expires_at: a.expiresAt,
    files_saved: a.filesSaved ? 1 : 0,
    created_at: a.createdAt,
    answered_at: a.answeredAt,
    completed_at: a.completedAt,
    take: a.take,
    vars: a.vars,
    made_by_job: a.madeByJob ?? null,
    copied_from: a.copiedFrom ?? null,
  };
}

/** Rows into `table` in the dump's order, a chunk per statement. */
async function insertAll<T extends keyof Tables>(
  tx: Tx,
  c: LedgerContext,
  table: T,
  rows: ReadonlyArray<Record<string, unknown>>,
): Promise<void> {
  const statements: Statement[] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT)
    statements.push(
      c.q
        .insertInto(table)
        .values(rows.slice(start, start + ROWS_PER_STATEMENT) as never)
        .compile(),
    );
  if (statements.length > 0) await tx.run(statements);
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
