import type { LedgerContext } from './ledger-context.js';
import type { ItemState } from './records.js';

/** What the streamed reads (status, export, the gallery) read of a page of items besides their attempts. */

/** An item's row as the streamed reads show it. */
export interface ItemRowShown {
  itemId: string;
  state: ItemState;
  errorCode: string | null;
  errorMessage: string | null;
}

/** The rows of these items, by id (an item only attempts know has none). */
export async function itemRowsOf(
  c: LedgerContext,
  itemIds: readonly string[],
): Promise<Map<string, ItemRowShown>> {
  const rows = await c.db.read(
    c.q
      .selectFrom('items')
      .select(['item_id as itemId', 'state', 'error_code as errorCode', 'error_message as errorMessage'])
      .where('batch_id', '=', c.batchId)
      .where(c.db.sql.inList('item_id', itemIds))
      .compile(),
  );
  return new Map(rows.map((row) => [row.itemId, row]));
}

/** A saved file of an attempt, its path absolute (or an s3:// URI). */
export interface AttemptFileRow {
  attemptId: number;
  idx: number;
  path: string;
  sha256: string;
  bytes: number;
}

/** These attempts' files, by attempt, each attempt's in index order. */
export async function filesOfAttempts(
  c: LedgerContext,
  attemptIds: readonly number[],
): Promise<Map<number, AttemptFileRow[]>> {
  const byAttempt = new Map<number, AttemptFileRow[]>();
  if (attemptIds.length === 0) return byAttempt;
  const rows = await c.db.read(
    c.q
      .selectFrom('files')
      .select(['attempt_id as attemptId', 'idx', 'path', 'sha256', 'bytes'])
      .where(c.db.sql.inList('attempt_id', attemptIds))
      .orderBy('attempt_id')
      .orderBy('idx')
      .compile(),
  );
  for (const row of rows) {
    const file = { ...row, path: c.paths.absolute(row.path), bytes: Number(row.bytes) };
    const own = byAttempt.get(row.attemptId);
    if (own) own.push(file);
    else byAttempt.set(row.attemptId, [file]);
  }
  return byAttempt;
}
