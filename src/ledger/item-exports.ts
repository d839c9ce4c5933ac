import { sql } from 'kysely';
import { jobOfBytesColumn } from './attempt-reads.js';
import {
  type ExportAttemptRow,
  ExportedItem,
  FileRow,
  ItemAttempts,
  type ItemExport,
  savedStanding,
} from './export-rows.js';
import type { LedgerContext } from './ledger-context.js';
import { type AttemptFileRow, filesOfAttempts, itemRowsOf } from './page-rows.js';
import { nextAfter, PAGE_SIZE, type Page, paged, pagedIds } from './paging.js';

export type { ItemExport, SavedFile } from './export-rows.js';

/** The ids a page at a time, each page's items, attempts and standing files read by three statements. */
export function itemExports(c: LedgerContext, ids: readonly string[]): AsyncIterable<ItemExport> {
  return pagedIds(c, ids, EXPORT_PAGE, (page, wanted) => exportPage(c, page, wanted));
}

/**
 * Ids per page of export: its rows are the heaviest of the walks (the request, the files), and a
 * page of 2,000 held while read outlived young collections often enough to double the peak RSS
 * of a million-item export; a page of 500 costs no time on SQLite and a few seconds on PostgreSQL.
 */
const EXPORT_PAGE = 500;

async function exportPage(
  c: LedgerContext,
  page: readonly string[],
  wanted: readonly string[],
): Promise<ItemExport[]> {
  const items = await itemRowsOf(c, wanted);
  const attempts = await attemptsOf(c, wanted);
  const files = await filesOfAttempts(
    c,
    [...attempts.values()].flatMap((each) => savedStanding(each) ?? []),
  );
  return page.map((id) => {
    const own = attempts.get(id);
    return new ExportedItem(id, items.get(id), own, filesOfExport(files.get(savedStanding(own) ?? -1)));
  });
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
        jobOfBytesColumn(c).as('jobId'),
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

/** An attempt's files as export writes them. */
function filesOfExport(files: readonly AttemptFileRow[] | undefined): FileRow[] {
  return (files ?? []).map((file) => new FileRow(file.idx, file.path, file.sha256, file.bytes));
}

/**
 * Items this batch paid for (an attempt charged, or files saved) whose ids are not among `ids`:
 * what a manifest no longer names (an item removed, or renamed when a list value changed) but the
 * money and the files on disk still stand for. In id order, so an export is the same every time.
 * An unpaid attempt (refused, or refunded in full) moved no money, so such an item is left out.
 */
export async function paidItemsNotIn(
  c: LedgerContext,
  ids: readonly string[] | { has(id: string): boolean },
): Promise<string[]> {
  const named = Array.isArray(ids) ? new Set(ids) : (ids as { has(id: string): boolean });
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
