import { sql } from 'kysely';
import {
  type ExportAttemptRow,
  ExportedItem,
  type ExportItemRow,
  FileRow,
  ItemAttempts,
  type ItemExport,
  savedStanding,
} from './export-rows.js';
import type { LedgerContext } from './ledger-context.js';
import { nextAfter, PAGE_SIZE, type Page, paged } from './paging.js';

export type { ItemExport, SavedFile } from './export-rows.js';

/** The ids a page at a time, each page's items, attempts and standing files read by three statements. */
export function itemExports(c: LedgerContext, ids: readonly string[]): AsyncIterable<ItemExport> {
  return paged(c, (after: number | undefined) => exportPage(c, ids, after ?? 0));
}

/**
 * Ids per page of export: its rows are the heaviest of the walks (the request, the files), and a
 * page of 2,000 held while read outlived young collections often enough to double the peak RSS
 * of a million-item export; a page of 500 costs no time on SQLite and a few seconds on PostgreSQL.
 */
const EXPORT_PAGE = 500;

async function exportPage(
  c: LedgerContext,
  ids: readonly string[],
  from: number,
): Promise<Page<number, ItemExport>> {
  const page = ids.slice(from, from + EXPORT_PAGE);
  const next = from + EXPORT_PAGE < ids.length ? from + EXPORT_PAGE : null;
  if (page.length === 0) return { rows: [], next };
  const wanted = [...new Set(page)];
  const items = new Map<string, ExportItemRow>();
  for (const row of await c.db.read(
    c.q
      .selectFrom('items')
      .select(['item_id as itemId', 'state', 'error_code as errorCode'])
      .where('batch_id', '=', c.batchId)
      .where(c.db.sql.inList('item_id', wanted))
      .compile(),
  ))
    items.set(row.itemId, row);
  const attempts = await attemptsOf(c, wanted);
  const files = await filesOf(
    c,
    [...attempts.values()].flatMap((each) => savedStanding(each) ?? []),
  );
  const rows = page.map((id) => {
    const own = attempts.get(id);
    return new ExportedItem(id, items.get(id), own, files.get(savedStanding(own) ?? -1) ?? []);
  });
  return { rows, next };
}

/** Each item's attempts added up, and the one that stands for it. */
async function attemptsOf(c: LedgerContext, itemIds: readonly string[]): Promise<Map<string, ItemAttempts>> {
  const rows: ExportAttemptRow[] = await c.db.read(
    c.q
      .selectFrom('attempts')
      .select([
        'item_id as itemId',
        'id',
        sql<number>`amount_micros - refunded_micros`.as('net'),
        'files_saved as filesSaved',
        'request_body as requestBody',
        // A ledger written before variables were recorded is read as it is (read-only: never migrated).
        c.column<string | null>('attempts', 'vars', 'vars', null).as('vars'),
        'job_id as jobId',
        'completed_at as completedAt',
        'expires_at as expiresAt',
      ])
      .where('batch_id', '=', c.batchId)
      .where(c.db.sql.inList('item_id', itemIds))
      .compile(),
  );
  const byItem = new Map<string, ItemAttempts>();
  for (const row of rows) {
    const own = byItem.get(row.itemId) ?? new ItemAttempts();
    byItem.set(row.itemId, own);
    own.add(row);
  }
  return byItem;
}

/** These attempts' files, in index order. */
async function filesOf(c: LedgerContext, attemptIds: readonly number[]): Promise<Map<number, FileRow[]>> {
  const byAttempt = new Map<number, FileRow[]>();
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
    const own = byAttempt.get(row.attemptId) ?? [];
    byAttempt.set(row.attemptId, own);
    own.push(new FileRow(row.idx, c.paths.absolute(row.path), row.sha256, Number(row.bytes)));
  }
  return byAttempt;
}

/**
 * Items this batch paid for (an attempt charged, or files saved) whose ids are not among `ids`:
 * what a manifest no longer names (an item removed, or renamed when a list value changed) but the
 * money and the files on disk still stand for. In id order, so an export is the same every time.
 * An unpaid attempt (refused, or refunded in full) moved no money, so such an item is left out.
 */
export async function paidItemsNotIn(c: LedgerContext, ids: readonly string[]): Promise<string[]> {
  const named = new Set(ids);
  const found: string[] = [];
  for await (const itemId of paged(c, (after: string | undefined) => paidPage(c, after))) {
    if (!named.has(itemId)) found.push(itemId);
  }
  return found;
}

async function paidPage(c: LedgerContext, after: string | undefined): Promise<Page<string, string>> {
  const key = c.db.sql.key('item_id');
  const rows = await c.db.read(
    c.q
      .selectFrom('attempts')
      .select(key.as('itemId'))
      .distinct()
      .where('batch_id', '=', c.batchId)
      .where((eb) => eb.or([eb('amount_micros', '>', 0), eb('files_saved', '=', 1)]))
      .$if(after !== undefined, (query) => query.where(key, '>', after!))
      .orderBy(key)
      .limit(PAGE_SIZE)
      .compile(),
  );
  const itemIds = rows.map((row) => row.itemId);
  return { rows: itemIds, next: nextAfter(itemIds) };
}
