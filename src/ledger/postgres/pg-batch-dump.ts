import { attemptIdIn, byItemId } from '../batch-dump.js';
import type { BatchDump, EventRecord, RunRecord } from '../records.js';
import { BATCH_LOCK, listAttempts } from './pg-attempts.js';
import { boundService, listItems } from './pg-items-files.js';
import { keepers } from './pg-keepers.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

/**
 * A whole batch out of, and into, a PostgreSQL ledger (records.ts, BatchDump): the other side of
 * batch-dump.ts. The service binding is two columns of the batch's row here; leases and
 * heartbeats are left out both ways, so a copied run never counts as a live runner.
 */

export function dumpBatch(c: PgLedgerConnection): BatchDump {
  const [batch] = c.db.query<BatchDump['batch']>(
    'SELECT name, manifest_path AS "manifestPath", created_at AS "createdAt" FROM batches WHERE id = $1',
    [c.batchId],
  );
  if (batch === undefined) throw new Error('the ledger records no such batch');
  const files = c.db.query<BatchDump['files'][number]>(
    `SELECT f.attempt_id AS "attemptId", f.idx, f.path, f.bytes, f.sha256, f.saved_at AS "savedAt", f.mtime_ms AS "mtimeMs"
       FROM files f JOIN attempts a ON a.id = f.attempt_id WHERE a.batch_id = $1 ORDER BY f.attempt_id, f.idx`,
    [c.batchId],
  );
  for (const file of files) file.path = c.paths.stored(c.paths.absolute(file.path));
  const events = c.db.query<EventRecord>(
    `SELECT at, item_id AS "itemId", attempt_id AS "attemptId", kind, detail FROM events WHERE batch_id = $1 ORDER BY id`,
    [c.batchId],
  );
  const runs = c.db.query<RunRecord>(
    `SELECT pid, runner, started_at AS "startedAt", ended_at AS "endedAt", exit_code AS "exitCode"
       FROM runs WHERE batch_id = $1 ORDER BY id`,
    [c.batchId],
  );
  const attempts = listAttempts(c).map((attempt) => ({
    ...attempt,
    take: attempt.take ?? 1,
    vars: attempt.vars ?? null,
  }));
  const items = listItems(c).sort(byItemId);
  return { batch, service: boundService(c), items, attempts, files, events, runs, keepers: keepers(c) };
}

/**
 * Loads `dump` into this batch, which must record no item and no attempt, as one transaction
 * under the batch's lock (the one a runner's admission takes): all of it or none, and no runner
 * slips an attempt in between the check and the load. Attempts get this database's ids; files and
 * events follow them.
 */
export function loadBatch(c: PgLedgerConnection, dump: BatchDump): void {
  c.db.transaction(() => {
    c.db.query('SELECT pg_advisory_xact_lock($1, $2)', [BATCH_LOCK, c.batchId]);
    const [held] = c.db.query<{ n: number }>(
      `SELECT (SELECT COUNT(*) FROM items WHERE batch_id = $1) + (SELECT COUNT(*) FROM attempts WHERE batch_id = $1) AS n`,
      [c.batchId],
    );
    if (Number(held?.n ?? 0) > 0)
      throw new Error(`the ledger already records items or attempts of ${dump.batch.name}`);
    bindDumpedService(c, dump);
    insertRows(c, 'items', dump.items.map(rowOf(c)));
    const ids = new Map<number, number>();
    for (const chunk of chunks(dump.attempts)) {
      const keys = new Map(chunk.map((attempt) => [attempt.idempotencyKey, attempt.id]));
      const rows = chunk.map(({ id: _id, ...attempt }) => ({
        ...attempt,
        batchId: c.batchId,
        filesSaved: attempt.filesSaved ? 1 : 0,
      }));
      const added = insertRows<{ id: number; key: string }>(
        c,
        'attempts',
        rows,
        'id, idempotency_key AS key',
      );
      for (const row of added) ids.set(keys.get(row.key)!, row.id);
    }
    insertRows(
      c,
      'files',
      dump.files.map((file) => ({ ...file, attemptId: attemptIdIn(ids, file) })),
    );
    insertRows(
      c,
      'events',
      dump.events.map((event) => ({
        ...rowOf(c)(event),
        attemptId: event.attemptId === null ? null : (ids.get(event.attemptId) ?? null),
      })),
    );
    insertRows(c, 'runs', dump.runs.map(rowOf(c)));
    insertRows(c, 'keepers', dump.keepers.map(rowOf(c)));
  });
}

const rowOf =
  (c: PgLedgerConnection) =>
  <T extends object>(row: T): T & { batchId: number } => ({ ...row, batchId: c.batchId });

/** Rows per statement: a batch of 100,000 attempts is 100 statements, each a bounded message. */
const ROWS_PER_STATEMENT = 1000;

function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT)
    out.push(rows.slice(start, start + ROWS_PER_STATEMENT));
  return out;
}

const snake = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * Inserts `rows` (camelCase keys named after `table`'s columns) in the dump's order, as JSON that
 * PostgreSQL reads into the table's own row type: one round trip per chunk, not per row.
 */
function insertRows<R = never>(
  c: PgLedgerConnection,
  table: 'items' | 'attempts' | 'files' | 'events' | 'runs' | 'keepers',
  rows: readonly object[],
  returning = '',
): R[] {
  const out: R[] = [];
  for (const chunk of chunks(rows)) {
    const columns = Object.keys(chunk[0]!).map(snake).join(', ');
    const json = chunk.map((row) =>
      Object.fromEntries(Object.entries(row).map(([key, value]) => [snake(key), value])),
    );
    out.push(
      ...c.db.query<R>(
        `INSERT INTO ${table} (${columns}) SELECT ${columns}
           FROM json_populate_recordset(NULL::${table}, $1::json) WITH ORDINALITY AS r ORDER BY r.ordinality
         ${returning ? `RETURNING ${returning}` : ''}`,
        [JSON.stringify(json)],
      ),
    );
  }
  return out;
}

/** The batch row's service: set from the dump; a batch already bound to another service is refused. */
function bindDumpedService(c: PgLedgerConnection, dump: BatchDump): void {
  const bound = boundService(c);
  if (dump.service !== null && bound !== null && bound.identity !== dump.service.identity)
    throw new Error(`the batch is bound to ${bound.identity} here, to ${dump.service.identity} in the dump`);
  c.db.query(
    `UPDATE batches SET manifest_path = $2, created_at = $3,
       service_identity = COALESCE($4, service_identity), service_bound_at = COALESCE($5, service_bound_at)
     WHERE id = $1`,
    [
      c.batchId,
      dump.batch.manifestPath,
      dump.batch.createdAt,
      dump.service?.identity ?? null,
      dump.service?.boundAt ?? null,
    ],
  );
}
