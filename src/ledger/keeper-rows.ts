import { sql } from 'kysely';
import { jobOfBytesColumn } from './attempt-reads.js';
import type { Statement } from './dialect/database.js';
import type { LedgerContext } from './ledger-context.js';
import {
  type KeeperChange,
  type KeeperRecord,
  type SavedTake,
  type SavedTakeRow,
  savedTakesOf,
} from './records.js';
import type { ReusableTake } from './reused-take.js';
import { eventOf } from './runs-and-events.js';

/**
 * The keepers table: which take of each manifest item a person chose (`mediabatch keep`). A
 * change is one row written or deleted, with a `keeper_set` or `keeper_cleared` event beside it.
 */

/** Every keeper of the batch, in item id order; none on a ledger read before the table existed. */
export async function keepers(c: LedgerContext): Promise<KeeperRecord[]> {
  if (!c.has('keepers')) return [];
  return c.db.read(
    c.q
      .selectFrom('keepers')
      .select(['item_id as itemId', 'kept_item_id as keptItemId', 'take', 'chosen_at as chosenAt'])
      .where('batch_id', '=', c.batchId)
      .orderBy(c.db.sql.key('item_id'))
      .compile(),
  );
}

/** One change: a cleared keeper's event only if there was one to clear (read by the statement itself). */
function keeperStatements(c: LedgerContext, change: KeeperChange): Statement[] {
  const mine = c.q
    .selectFrom('keepers')
    .where('batch_id', '=', c.batchId)
    .where('item_id', '=', change.itemId);
  if (change.kept === null)
    return [
      c.q
        .insertInto('events')
        .columns(['at', 'batch_id', 'item_id', 'attempt_id', 'kind', 'detail'])
        .expression(
          mine.select([
            sql<string>`cast(${c.at()} as text)`.as('at'),
            'batch_id',
            'item_id',
            sql<null>`cast(null as bigint)`.as('attempt_id'),
            sql<string>`cast('keeper_cleared' as text)`.as('kind'),
            sql<null>`cast(null as text)`.as('detail'),
          ]),
        )
        .compile(),
      c.q
        .deleteFrom('keepers')
        .where('batch_id', '=', c.batchId)
        .where('item_id', '=', change.itemId)
        .compile(),
    ];
  const { itemId, take } = change.kept;
  return [
    c.q
      .insertInto('keepers')
      .values({ batch_id: c.batchId, item_id: change.itemId, kept_item_id: itemId, take, chosen_at: c.at() })
      .onConflict((conflict) =>
        conflict.columns(['batch_id', 'item_id']).doUpdateSet((eb) => ({
          kept_item_id: eb.ref('excluded.kept_item_id'),
          take: eb.ref('excluded.take'),
          chosen_at: eb.ref('excluded.chosen_at'),
        })),
      )
      .compile(),
    eventOf(c, change.itemId, null, 'keeper_set', { item: itemId, take }),
  ];
}

/** Every change in one transaction, committed at once: all of them or none. */
export async function setKeepers(c: LedgerContext, changes: readonly KeeperChange[]): Promise<void> {
  if (changes.length === 0) return;
  await c.db.batch(
    changes.flatMap((change) => keeperStatements(c, change)),
    'durable',
  );
}

/** A renamed ledger item's keepers follow it: as the group (variant 1, or no variants) and as the kept one. */
export function renameKeepersStatements(c: LedgerContext, from: string, to: string): Statement[] {
  return [
    c.q
      .updateTable('keepers')
      .set({ item_id: to })
      .where('batch_id', '=', c.batchId)
      .where('item_id', '=', from)
      .compile(),
    c.q
      .updateTable('keepers')
      .set({ kept_item_id: to })
      .where('batch_id', '=', c.batchId)
      .where('kept_item_id', '=', from)
      .compile(),
  ];
}

/** An attempt of a take after the first, saved or not: one pass over the batch's attempts at worst. */
export async function hasLaterTakes(c: LedgerContext): Promise<boolean> {
  if (!c.has('attempts', 'take')) return false;
  const rows = await c.db.read(
    c.q
      .selectFrom('attempts')
      .select('id')
      .where('batch_id', '=', c.batchId)
      .where('take', '>', 1)
      .limit(1)
      .compile(),
  );
  return rows.length > 0;
}

/** Every attempt of the batch whose files were saved, with its files, in attempt order. */
export async function savedTakes(c: LedgerContext): Promise<SavedTake[]> {
  return savedTakesOf(await takeRows(c, false));
}

/** The same takes with the requests their attempts sent (runner/take-index.ts finds a take by its request). */
export async function reusableTakes(c: LedgerContext): Promise<ReusableTake[]> {
  return savedTakesOf((await takeRows(c, true)) as Array<SavedTakeRow & ReusableTake>);
}

async function takeRows(c: LedgerContext, withRequests: boolean): Promise<SavedTakeRow[]> {
  const rows = await c.db.read(
    c.q
      .selectFrom('attempts as a')
      .innerJoin('files as f', 'f.attempt_id', 'a.id')
      .select([
        'a.item_id as itemId',
        'a.id as attemptId',
        c.column<number>('attempts', 'take', 'a.take', 1).as('take'),
        // The job that made the bytes: a copy names its result's (docs/results.md).
        jobOfBytesColumn(c, 'a').as('jobId'),
        'a.amount_micros as amountMicros',
        'a.refunded_micros as refundedMicros',
        'a.completed_at as completedAt',
        'f.idx',
        'f.path',
        'f.sha256',
        'f.bytes',
      ])
      .$if(withRequests, (query) =>
        query.select([
          'a.request_body as requestBody',
          'a.idempotency_key as idempotencyKey',
          'a.expires_at as expiresAt',
          c.column<string | null>('attempts', 'vars', 'a.vars', null).as('vars'),
        ]),
      )
      .where('a.batch_id', '=', c.batchId)
      .where('a.files_saved', '=', 1)
      .orderBy('a.id')
      .orderBy('f.idx')
      .compile(),
  );
  for (const row of rows) row.path = c.paths.absolute(row.path);
  return rows as SavedTakeRow[];
}
