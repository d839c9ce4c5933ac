import { sql } from 'kysely';
import type { Statement } from './dialect/database.js';
import { leaseLetGo, letsLeaseGo, unleased } from './leases.js';
import type { LedgerContext } from './ledger-context.js';
import type { ItemRecord, ItemState } from './records.js';
import { eventOf } from './runs-and-events.js';
import { StatementShape } from './statement-shape.js';

/** The items table: one row per manifest item, its state and the request hash it was last run with. */

export interface ItemUpdate {
  state: ItemState;
  requestHash?: string;
  retriesUsed?: number;
  errorCode?: string | null;
  errorMessage?: string | null;
}

/** How many items the batch has rows for. */
export async function countItems(c: LedgerContext): Promise<number> {
  const rows = await c.db.read(
    c.q
      .selectFrom('items')
      .select(sql<number>`cast(count(*) as bigint)`.as('count'))
      .where('batch_id', '=', c.batchId)
      .compile(),
  );
  return Number(rows[0]?.count ?? 0);
}

/**
 * In item_id's byte order, the order of SQLite's key, on both databases; only the items named,
 * when `itemIds` is given (a runner adopting a few items of a large shared batch).
 */
export async function listItems(c: LedgerContext, itemIds?: readonly string[]): Promise<ItemRecord[]> {
  if (itemIds?.length === 0) return [];
  const query = c.q
    .selectFrom('items')
    .select([
      'item_id as itemId',
      'request_hash as requestHash',
      'state',
      'retries_used as retriesUsed',
      'error_code as errorCode',
      'error_message as errorMessage',
      'updated_at as updatedAt',
    ])
    .where('batch_id', '=', c.batchId)
    .orderBy(c.db.sql.key('item_id'));
  return c.db.read(
    (itemIds === undefined ? query : query.where(c.db.sql.inList('item_id', itemIds))).compile(),
  );
}

/** Rows per statement when many items are written at once (a manifest of 100,000 is 100 statements). */
const ITEMS_PER_STATEMENT = 1000;

/**
 * The upserts of many items. An id given twice keeps its last row (one statement may not upsert a
 * row twice). On a shared ledger, a row another runner holds by a live lease is its to write:
 * left as it is (a runner passes its name; a command that holds the whole batch passes none).
 */
export function putItemsStatements(
  c: LedgerContext,
  given: ReadonlyArray<{ itemId: string } & ItemUpdate>,
): Statement[] {
  const items = [...new Map(given.map((item) => [item.itemId, item])).values()];
  const at = c.at();
  const statements: Statement[] = [];
  for (let start = 0; start < items.length; start += ITEMS_PER_STATEMENT) {
    const rows = items.slice(start, start + ITEMS_PER_STATEMENT).map((item) => ({
      batch_id: c.batchId,
      item_id: item.itemId,
      request_hash: item.requestHash ?? '',
      state: item.state,
      retries_used: item.retriesUsed ?? 0,
      error_code: item.errorCode ?? null,
      error_message: item.errorMessage ?? null,
      updated_at: at,
    }));
    statements.push(
      c.q
        .insertInto('items')
        .values(rows)
        .onConflict((conflict) => {
          const update = conflict.columns(['batch_id', 'item_id']).doUpdateSet((eb) => ({
            request_hash: eb.ref('excluded.request_hash'),
            state: eb.ref('excluded.state'),
            retries_used: eb.ref('excluded.retries_used'),
            error_code: eb.ref('excluded.error_code'),
            error_message: eb.ref('excluded.error_message'),
            updated_at: eb.ref('excluded.updated_at'),
          }));
          return c.can.severalRunners && c.runnerId !== null ? update.where(unleased(c.runnerId)) : update;
        })
        .compile(),
    );
  }
  return statements;
}

/** Inserts or rewrites many items at once (manifest sync); one transaction for all of them. */
export async function putItems(
  c: LedgerContext,
  items: ReadonlyArray<{ itemId: string } & ItemUpdate>,
): Promise<void> {
  const statements = putItemsStatements(c, items);
  if (statements.length <= 1) {
    if (statements.length === 1) await c.db.batch(statements);
    return;
  }
  // A large manifest: one statement per round trip, so that all of them are never held at once.
  await c.db.transaction(async (tx) => {
    for (const [n, statement] of statements.entries()) await tx.run([statement], n === statements.length - 1);
  });
}

/** An item's new state; one this runner settles on a shared ledger lets its lease go too. */
const itemState = new StatementShape(
  (
    c,
    v: {
      state: ItemState;
      request_hash: string | null;
      retries_used: number | null;
      error_code: string | null;
      error_message: string | null;
      updated_at: string;
      runner: string;
      batch_id: number;
      item_id: string;
    },
    lease: 'letGo' | 'none',
  ) =>
    c.q
      .updateTable('items')
      .set({
        state: v.state,
        request_hash: sql<string>`coalesce(${v.request_hash}, request_hash)`,
        retries_used: sql<number>`coalesce(${v.retries_used}, retries_used)`,
        error_code: v.error_code,
        error_message: v.error_message,
        updated_at: v.updated_at,
        ...(lease === 'letGo' ? leaseLetGo(v.runner) : {}),
      })
      .where('batch_id', '=', v.batch_id)
      .where('item_id', '=', v.item_id),
);

/** An item's new state and the event that says why (item_<state> unless named). */
export function itemStateStatements(
  c: LedgerContext,
  itemId: string,
  update: ItemUpdate,
  event?: { kind: string; detail?: unknown },
): Statement[] {
  const values = {
    state: update.state,
    request_hash: update.requestHash ?? null,
    retries_used: update.retriesUsed ?? null,
    error_code: update.errorCode ?? null,
    error_message: update.errorMessage ?? null,
    updated_at: c.at(),
    runner: c.runnerId ?? '',
    batch_id: c.batchId,
    item_id: itemId,
  };
  return [
    itemState.bind(c, values, letsLeaseGo(c, update.state) ? 'letGo' : 'none'),
    eventOf(
      c,
      itemId,
      null,
      event?.kind ?? `item_${update.state}`,
      event?.detail ?? update.errorCode ?? null,
    ),
  ];
}

export async function setItemState(
  c: LedgerContext,
  itemId: string,
  update: ItemUpdate,
  event?: { kind: string; detail?: unknown },
): Promise<void> {
  await c.db.batch(itemStateStatements(c, itemId, update, event));
}
