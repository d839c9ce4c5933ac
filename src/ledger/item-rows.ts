import type { LedgerConnection } from './ledger-connection.js';
import type { ItemRecord, ItemState } from './records.js';
import { appendEvent } from './runs-and-events.js';

/** The items table: one row per manifest item, its state and the request hash it was last run with. */

export interface ItemUpdate {
  state: ItemState;
  requestHash?: string;
  retriesUsed?: number;
  errorCode?: string | null;
  errorMessage?: string | null;
}

export function listItems(c: LedgerConnection): ItemRecord[] {
  return c
    .prepare(
      `SELECT item_id AS itemId, request_hash AS requestHash, state, retries_used AS retriesUsed,
                  error_code AS errorCode, error_message AS errorMessage, updated_at AS updatedAt
           FROM items WHERE batch_id = ?`,
    )
    .all(c.batchId) as ItemRecord[];
}

/** Inserts or rewrites many items at once (manifest sync); one transaction for all of them. */
export function putItems(c: LedgerConnection, items: ReadonlyArray<{ itemId: string } & ItemUpdate>): void {
  const at = c.at();
  const upsert = c.prepare(
    `INSERT INTO items (batch_id, item_id, request_hash, state, retries_used, error_code, error_message, updated_at)
       VALUES (@batchId, @itemId, @requestHash, @state, @retriesUsed, @errorCode, @errorMessage, @at)
       ON CONFLICT (batch_id, item_id) DO UPDATE SET request_hash = excluded.request_hash, state = excluded.state,
         retries_used = excluded.retries_used, error_code = excluded.error_code,
         error_message = excluded.error_message, updated_at = excluded.updated_at`,
  );
  c.write(() => {
    for (const item of items) {
      upsert.run({
        batchId: c.batchId,
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

/** An item's new state, with the event that says why (item_<state> unless named). */
export function setItemState(
  c: LedgerConnection,
  itemId: string,
  update: ItemUpdate,
  event?: { kind: string; detail?: unknown },
): void {
  c.write(() => {
    c.prepare(
      `UPDATE items SET state = @state,
             request_hash = COALESCE(@requestHash, request_hash),
             retries_used = COALESCE(@retriesUsed, retries_used),
             error_code = @errorCode, error_message = @errorMessage, updated_at = @at
           WHERE batch_id = @batchId AND item_id = @itemId`,
    ).run({
      batchId: c.batchId,
      itemId,
      state: update.state,
      requestHash: update.requestHash ?? null,
      retriesUsed: update.retriesUsed ?? null,
      errorCode: update.errorCode ?? null,
      errorMessage: update.errorMessage ?? null,
      at: c.at(),
    });
    appendEvent(
      c,
      itemId,
      null,
      event?.kind ?? `item_${update.state}`,
      event?.detail ?? update.errorCode ?? null,
    );
  });
}
