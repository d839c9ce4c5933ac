import type { LedgerConnection } from './ledger-connection.js';
import {
  type KeeperChange,
  type KeeperRecord,
  type SavedTake,
  type SavedTakeRow,
  savedTakesOf,
} from './records.js';
import type { ReusableTake } from './reused-take.js';
import { appendEvent } from './runs-and-events.js';

/**
 * The keepers table: which take of each manifest item a person chose (`mediabatch keep`). A
 * change is one row written or deleted, with a `keeper_set` or `keeper_cleared` event beside it.
 */

/** Every keeper of the batch, in item id order; none on a ledger read before the table existed. */
export function keepers(c: LedgerConnection): KeeperRecord[] {
  if (!c.hasTable('keepers')) return [];
  return c
    .prepare(
      `SELECT item_id AS itemId, kept_item_id AS keptItemId, take, chosen_at AS chosenAt
         FROM keepers WHERE batch_id = ? ORDER BY item_id`,
    )
    .all(c.batchId) as KeeperRecord[];
}

/** Every change in one transaction: all of them or none. */
export function setKeepers(c: LedgerConnection, changes: readonly KeeperChange[]): void {
  c.write(() => {
    const at = c.at();
    for (const change of changes) {
      if (change.kept === null) {
        const gone = c
          .prepare('DELETE FROM keepers WHERE batch_id = ? AND item_id = ?')
          .run(c.batchId, change.itemId);
        if (gone.changes > 0) appendEvent(c, change.itemId, null, 'keeper_cleared', null);
        continue;
      }
      c.prepare(
        `INSERT OR REPLACE INTO keepers (batch_id, item_id, kept_item_id, take, chosen_at) VALUES (?, ?, ?, ?, ?)`,
      ).run(c.batchId, change.itemId, change.kept.itemId, change.kept.take, at);
      appendEvent(c, change.itemId, null, 'keeper_set', { item: change.kept.itemId, take: change.kept.take });
    }
  }, true);
}

/** A renamed ledger item's keepers follow it: as the group (variant 1, or no variants) and as the kept one. */
export function renameKeepers(c: LedgerConnection, from: string, to: string): void {
  c.prepare('UPDATE keepers SET item_id = ? WHERE batch_id = ? AND item_id = ?').run(to, c.batchId, from);
  c.prepare('UPDATE keepers SET kept_item_id = ? WHERE batch_id = ? AND kept_item_id = ?').run(
    to,
    c.batchId,
    from,
  );
}

/** The dump's keepers into this batch (loadBatch, inside its transaction). */
export function insertKeepers(c: LedgerConnection, rows: readonly KeeperRecord[]): void {
  const insert = c.prepare(
    'INSERT INTO keepers (batch_id, item_id, kept_item_id, take, chosen_at) VALUES (?, ?, ?, ?, ?)',
  );
  for (const row of rows) insert.run(c.batchId, row.itemId, row.keptItemId, row.take, row.chosenAt);
}

/** Every attempt of the batch whose files were saved, with its files, in attempt order. */
/** An attempt of a take after the first, saved or not: one pass over the batch's attempts at worst. */
export function hasLaterTakes(c: LedgerConnection): boolean {
  return (
    c.prepare('SELECT 1 FROM attempts WHERE batch_id = ? AND take > 1 LIMIT 1').get(c.batchId) !== undefined
  );
}

export function savedTakes(c: LedgerConnection): SavedTake[] {
  return savedTakesOf(takeRows<SavedTakeRow>(c, ''));
}

/** The same takes with the requests their attempts sent (runner/take-index.ts finds a take by its request). */
export function reusableTakes(c: LedgerConnection): ReusableTake[] {
  return savedTakesOf(
    takeRows<SavedTakeRow & { requestBody: string; expiresAt: string | null; vars: string | null }>(
      c,
      ', a.request_body AS requestBody, a.expires_at AS expiresAt, a.vars',
    ),
  );
}

function takeRows<T extends SavedTakeRow>(c: LedgerConnection, columns: string): T[] {
  const rows = c
    .prepare(
      `SELECT a.item_id AS itemId, a.id AS attemptId, a.take, a.job_id AS jobId, a.amount_micros AS amountMicros,
         a.refunded_micros AS refundedMicros, a.completed_at AS completedAt, f.idx, f.path, f.sha256, f.bytes${columns}
       FROM attempts a JOIN files f ON f.attempt_id = a.id
       WHERE a.batch_id = ? AND a.files_saved = 1 ORDER BY a.id, f.idx`,
    )
    .all(c.batchId) as T[];
  for (const row of rows) row.path = c.paths.absolute(row.path);
  return rows;
}
