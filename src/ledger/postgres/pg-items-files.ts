import { type FileMove, movedFiles } from '../item-rename.js';
import type { ItemUpdate } from '../item-rows.js';
import type { FileRecord, ItemRecord, ServiceBinding } from '../records.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

/**
 * Items, files, the service binding, runs and events in PostgreSQL: the steps of item-rows.ts,
 * item-rename.ts, file-rows.ts, service-binding.ts and runs-and-events.ts, in its SQL. Every write
 * may run twice after a lost connection (sync-connection.ts): each is an upsert or sets a value.
 */

/** In item_id's byte order, SQLite's order of its key: a PostgreSQL table's own order moves with every update. */
export function listItems(c: PgLedgerConnection): ItemRecord[] {
  return c.db.query<ItemRecord>(
    `SELECT item_id AS "itemId", request_hash AS "requestHash", state, retries_used AS "retriesUsed",
       error_code AS "errorCode", error_message AS "errorMessage", updated_at AS "updatedAt"
     FROM items WHERE batch_id = $1 ORDER BY item_id COLLATE "C"`,
    [c.batchId],
  );
}

/** Rows per statement when many items are written at once (a manifest of 100,000 is 100 statements). */
const ITEMS_PER_STATEMENT = 1000;

/**
 * Inserts or rewrites many items at once. A row another runner holds by a live lease is its to
 * write (`runnerId` names this one; none: a command that holds the whole batch): left as it is.
 */
export function putItems(
  c: PgLedgerConnection,
  given: ReadonlyArray<{ itemId: string } & ItemUpdate>,
  runnerId: string | null = null,
): void {
  // One statement may not upsert a row twice: an id given twice keeps its last row, as SQLite's
  // one upsert after another does.
  const items = [...new Map(given.map((item) => [item.itemId, item])).values()];
  if (items.length === 0) return;
  const at = c.at();
  c.db.transaction(() => {
    for (let start = 0; start < items.length; start += ITEMS_PER_STATEMENT) {
      const chunk = items.slice(start, start + ITEMS_PER_STATEMENT);
      c.db.query(
        `INSERT INTO items (batch_id, item_id, request_hash, state, retries_used, error_code, error_message, updated_at)
         SELECT $1, * , $8 FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[])
         ON CONFLICT (batch_id, item_id) DO UPDATE SET request_hash = excluded.request_hash, state = excluded.state,
           retries_used = excluded.retries_used, error_code = excluded.error_code,
           error_message = excluded.error_message, updated_at = excluded.updated_at
         WHERE $9::text IS NULL OR items.claimed_by IS NULL OR items.claimed_by = $9 OR items.lease_until < now()`,
        [
          c.batchId,
          chunk.map((item) => item.itemId),
          chunk.map((item) => item.requestHash ?? ''),
          chunk.map((item) => item.state),
          chunk.map((item) => item.retriesUsed ?? 0),
          chunk.map((item) => item.errorCode ?? null),
          chunk.map((item) => item.errorMessage ?? null),
          at,
          runnerId,
        ],
      );
    }
  });
}

export function setItemState(
  c: PgLedgerConnection,
  itemId: string,
  update: ItemUpdate,
  event?: { kind: string; detail?: unknown },
): void {
  c.db.transaction(() => {
    c.db.query(
      `UPDATE items SET state = $3, request_hash = COALESCE($4, request_hash),
         retries_used = COALESCE($5, retries_used), error_code = $6, error_message = $7, updated_at = $8
       WHERE batch_id = $1 AND item_id = $2`,
      [
        c.batchId,
        itemId,
        update.state,
        update.requestHash ?? null,
        update.retriesUsed ?? null,
        update.errorCode ?? null,
        update.errorMessage ?? null,
        c.at(),
      ],
    );
    appendEvent(
      c,
      itemId,
      null,
      event?.kind ?? `item_${update.state}`,
      event?.detail ?? update.errorCode ?? null,
    );
  });
}

export function renameItem(
  c: PgLedgerConnection,
  from: string,
  to: string,
  moves: readonly FileMove[],
): void {
  c.db.transaction(() => {
    const taken = c.db.query(
      `SELECT 1 FROM items WHERE batch_id = $1 AND item_id = $2
       UNION ALL SELECT 1 FROM attempts WHERE batch_id = $1 AND item_id = $2 LIMIT 1`,
      [c.batchId, to],
    );
    if (taken.length > 0) throw new Error(`cannot rename ${from} to ${to}: the ledger already knows ${to}`);
    const changed = c.db.execute(
      'UPDATE items SET item_id = $1, updated_at = $2 WHERE batch_id = $3 AND item_id = $4',
      [to, c.at(), c.batchId, from],
    );
    if (changed !== 1) throw new Error(`cannot rename ${from}: the ledger has no such item`);
    c.db.query('UPDATE attempts SET item_id = $1 WHERE batch_id = $2 AND item_id = $3', [
      to,
      c.batchId,
      from,
    ]);
    // Its keepers follow it: as the group (variant 1, or no variants) and as the kept item.
    for (const column of ['item_id', 'kept_item_id'])
      c.db.query(`UPDATE keepers SET ${column} = $1 WHERE batch_id = $2 AND ${column} = $3`, [
        to,
        c.batchId,
        from,
      ]);
    const files = movedFiles(c.paths, moves, (path, move) =>
      c.db.query('UPDATE files SET path = $1 WHERE attempt_id = $2 AND idx = $3', [
        path,
        move.attemptId,
        move.idx,
      ]),
    );
    appendEvent(c, to, null, 'renamed', { from, to, files });
    appendEvent(c, from, null, 'renamed', { from, to });
  });
}

const SAVED_FILES = 'FROM files f JOIN attempts a ON a.id = f.attempt_id WHERE a.batch_id = $1';

export function listFiles(c: PgLedgerConnection): FileRecord[] {
  const rows = c.db.query<FileRecord>(
    `SELECT f.attempt_id AS "attemptId", f.idx, f.path, f.bytes, f.sha256, f.saved_at AS "savedAt",
       f.mtime_ms AS "mtimeMs" ${SAVED_FILES} ORDER BY f.attempt_id, f.idx`,
    [c.batchId],
  );
  for (const row of rows) row.path = c.paths.absolute(row.path);
  return rows;
}

export function savedFileTotals(c: PgLedgerConnection): { bytes: number; outputs: number } {
  return c.db.query<{ bytes: number; outputs: number }>(
    `SELECT COALESCE(SUM(f.bytes), 0)::bigint AS bytes, COUNT(DISTINCT f.attempt_id)::bigint AS outputs ${SAVED_FILES}`,
    [c.batchId],
  )[0]!;
}

export function itemFilePaths(c: PgLedgerConnection): IterableIterator<[string, string]> {
  const rows = c.db.query<{ itemId: string; path: string }>(
    `SELECT a.item_id AS "itemId", f.path ${SAVED_FILES} ORDER BY f.attempt_id, f.idx`,
    [c.batchId],
  );
  return rows.map((row): [string, string] => [row.itemId, c.paths.absolute(row.path)]).values();
}

export function wroteFile(c: PgLedgerConnection, path: string): boolean {
  return (
    c.db.query(`SELECT 1 ${SAVED_FILES} AND f.path = $2 LIMIT 1`, [c.batchId, c.paths.stored(path)]).length >
    0
  );
}

export function savedAt(c: PgLedgerConnection, attemptId: number): string | null {
  const [row] = c.db.query<{ savedAt: string | null }>(
    'SELECT MIN(saved_at) AS "savedAt" FROM files WHERE attempt_id = $1',
    [attemptId],
  );
  return row?.savedAt ?? null;
}

export function recordFilesSaved(
  c: PgLedgerConnection,
  attemptId: number,
  files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>,
): void {
  c.db.transaction(() => {
    const at = c.at();
    for (const file of files) {
      const mtime = file.mtimeMs === undefined || file.mtimeMs === null ? null : Math.trunc(file.mtimeMs);
      c.db.query(
        `INSERT INTO files (attempt_id, idx, path, bytes, sha256, saved_at, mtime_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (attempt_id, idx) DO UPDATE SET path = excluded.path, bytes = excluded.bytes,
           sha256 = excluded.sha256, saved_at = excluded.saved_at, mtime_ms = excluded.mtime_ms`,
        [attemptId, file.idx, c.paths.stored(file.path), file.bytes, file.sha256, at, mtime],
      );
    }
    const [owner] = c.db.query<{ itemId: string }>(
      'UPDATE attempts SET files_saved = 1 WHERE id = $1 RETURNING item_id AS "itemId"',
      [attemptId],
    );
    appendEvent(c, owner!.itemId, attemptId, 'files_saved', { count: files.length });
  });
}

export function recordFileMoved(c: PgLedgerConnection, attemptId: number, idx: number, path: string): void {
  const stored = c.paths.stored(path);
  c.db.transaction(() => {
    c.db.query('UPDATE files SET path = $1 WHERE attempt_id = $2 AND idx = $3', [stored, attemptId, idx]);
    const [owner] = c.db.query<{ itemId: string }>('SELECT item_id AS "itemId" FROM attempts WHERE id = $1', [
      attemptId,
    ]);
    appendEvent(c, owner!.itemId, attemptId, 'file_moved', { idx, path: stored });
  });
}

/** A shared database holds many batches: each batch row records its own service. */
export function boundService(c: PgLedgerConnection): ServiceBinding | null {
  const [row] = c.db.query<{ identity: string | null; boundAt: string | null }>(
    'SELECT service_identity AS identity, service_bound_at AS "boundAt" FROM batches WHERE id = $1',
    [c.batchId],
  );
  return row?.identity && row.boundAt ? { identity: row.identity, boundAt: row.boundAt } : null;
}

export function bindService(c: PgLedgerConnection, identity: string): ServiceBinding {
  c.db.transaction(() => {
    const bound = c.db.execute(
      `UPDATE batches SET service_identity = $2, service_bound_at = $3 WHERE id = $1 AND service_identity IS NULL`,
      [c.batchId, identity, c.at()],
    );
    if (bound > 0) appendEvent(c, null, null, 'service_bound', { service: identity });
  });
  return boundService(c)!;
}

export function startRun(c: PgLedgerConnection, pid: number, runner: string | null): number {
  const [row] = c.db.query<{ id: number }>(
    'INSERT INTO runs (batch_id, pid, runner, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, now()) RETURNING id',
    [c.batchId, pid, runner, c.at()],
  );
  return row!.id;
}

export function endRun(c: PgLedgerConnection, runId: number, exitCode: number): void {
  c.db.query('UPDATE runs SET ended_at = $1, exit_code = $2, heartbeat_at = NULL WHERE id = $3', [
    c.at(),
    exitCode,
    runId,
  ]);
}

export function lastRun(c: PgLedgerConnection): { pid: number; startedAt: string } | null {
  const [row] = c.db.query<{ pid: number; startedAt: string }>(
    'SELECT pid, started_at AS "startedAt" FROM runs WHERE batch_id = $1 ORDER BY id DESC LIMIT 1',
    [c.batchId],
  );
  return row ?? null;
}

export function appendEvent(
  c: PgLedgerConnection,
  itemId: string | null,
  attemptId: number | null,
  kind: string,
  detail: unknown,
): void {
  c.db.query(
    'INSERT INTO events (at, batch_id, item_id, attempt_id, kind, detail) VALUES ($1, $2, $3, $4, $5, $6)',
    [
      c.at(),
      c.batchId,
      itemId,
      attemptId,
      kind,
      detail === null || detail === undefined ? null : JSON.stringify(detail),
    ],
  );
}
