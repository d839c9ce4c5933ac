import {
  type KeeperChange,
  type KeeperRecord,
  type SavedTake,
  type SavedTakeRow,
  savedTakesOf,
} from '../records.js';
import type { ReusableTake } from '../reused-take.js';
import { appendEvent } from './pg-items-files.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

/**
 * The keepers table in PostgreSQL: keeper-rows.ts in its SQL. A change run twice after a lost
 * connection (sync-connection.ts) is the same upsert or delete again.
 */

/** In item_id's byte order, as SQLite's key orders them; none on a database set up before the table. */
export function keepers(c: PgLedgerConnection): KeeperRecord[] {
  const [table] = c.db.query<{ found: string | null }>("SELECT to_regclass('keepers')::text AS found");
  if (table?.found == null) return [];
  return c.db.query<KeeperRecord>(
    `SELECT item_id AS "itemId", kept_item_id AS "keptItemId", take, chosen_at AS "chosenAt"
       FROM keepers WHERE batch_id = $1 ORDER BY item_id COLLATE "C"`,
    [c.batchId],
  );
}

/** Every change in one transaction: all of them or none. */
export function setKeepers(c: PgLedgerConnection, changes: readonly KeeperChange[]): void {
  c.db.transaction(() => {
    const at = c.at();
    for (const change of changes) {
      if (change.kept === null) {
        const gone = c.db.execute('DELETE FROM keepers WHERE batch_id = $1 AND item_id = $2', [
          c.batchId,
          change.itemId,
        ]);
        if (gone > 0) appendEvent(c, change.itemId, null, 'keeper_cleared', null);
        continue;
      }
      c.db.query(
        `INSERT INTO keepers (batch_id, item_id, kept_item_id, take, chosen_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (batch_id, item_id) DO UPDATE
           SET kept_item_id = EXCLUDED.kept_item_id, take = EXCLUDED.take, chosen_at = EXCLUDED.chosen_at`,
        [c.batchId, change.itemId, change.kept.itemId, change.kept.take, at],
      );
      appendEvent(c, change.itemId, null, 'keeper_set', { item: change.kept.itemId, take: change.kept.take });
    }
  });
}

/** Every attempt of the batch whose files were saved, with its files, in attempt order. */
/** An attempt of a take after the first, saved or not. */
export function hasLaterTakes(c: PgLedgerConnection): boolean {
  return (
    c.db.query('SELECT 1 FROM attempts WHERE batch_id = $1 AND take > 1 LIMIT 1', [c.batchId]).length > 0
  );
}

export function savedTakes(c: PgLedgerConnection): SavedTake[] {
  return savedTakesOf(takeRows<SavedTakeRow>(c, ''));
}

/** The same takes with the requests their attempts sent (keeper-rows.ts, reusableTakes). */
export function reusableTakes(c: PgLedgerConnection): ReusableTake[] {
  return savedTakesOf(
    takeRows<SavedTakeRow & { requestBody: string; expiresAt: string | null; vars: string | null }>(
      c,
      ', a.request_body AS "requestBody", a.expires_at AS "expiresAt", a.vars',
    ),
  );
}

function takeRows<T extends SavedTakeRow>(c: PgLedgerConnection, columns: string): T[] {
  const rows = c.db.query<T>(
    `SELECT a.item_id AS "itemId", a.id AS "attemptId", a.take, a.job_id AS "jobId", a.amount_micros AS "amountMicros",
       a.refunded_micros AS "refundedMicros", a.completed_at AS "completedAt", f.idx, f.path, f.sha256, f.bytes${columns}
     FROM attempts a JOIN files f ON f.attempt_id = a.id
     WHERE a.batch_id = $1 AND a.files_saved = 1 ORDER BY a.id, f.idx`,
    [c.batchId],
  );
  for (const row of rows) row.path = c.paths.absolute(row.path);
  return rows;
}
