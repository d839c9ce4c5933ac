import { sql } from 'kysely';
import { ATTEMPT_COLUMNS, jobOfBytesColumn } from './attempt-reads.js';
import type { LedgerContext } from './ledger-context.js';
import { filesOfAttempts, itemRowsOf } from './page-rows.js';
import { nextAfter, PAGE_SIZE, type Page, paged, pagedIds } from './paging.js';
import type { AttemptRecord, ItemState } from './records.js';
import { checksOfAttempts, type ShownCheck } from './take-checks.js';

/**
 * One item's history as the gallery shows it (docs/gallery.md): its state and error, and every
 * attempt by seq without what it sent (the request body is most of an attempt's weight, and the
 * page shows none of it), each with its files' paths.
 */
export interface ItemHistory {
  itemId: string;
  /** Null when only attempts know the item. */
  state: ItemState | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: AttemptHistory[];
}

export interface AttemptHistory
  extends Pick<
    AttemptRecord,
    | 'id'
    | 'itemId'
    | 'seq'
    | 'idempotencyKey'
    | 'state'
    | 'httpStatus'
    | 'jobId'
    | 'jobStatus'
    | 'amountMicros'
    | 'refundedMicros'
    | 'errorCode'
    | 'errorMessage'
    | 'filesSaved'
    | 'createdAt'
    | 'completedAt'
  > {
  take: number;
  /** Absolute paths or s3:// URIs, in index order. */
  files: string[];
  /** Its take's check (docs/checks.md); null when it was never checked. */
  check: ShownCheck | null;
}

/** Ids per page: three statements each (items, attempts, files), as export reads them. */
const HISTORY_PAGE = 500;

/**
 * Each of `ids` in their order, then every other item the batch's ledger knows (items a manifest
 * no longer lists) in id order: a page of ids at a time, so 100,000 items stream without being held.
 */
export function itemHistories(c: LedgerContext, ids: readonly string[]): AsyncIterable<ItemHistory> {
  return (async function* () {
    yield* pagedIds(c, ids, HISTORY_PAGE, (page, wanted) => historyPage(c, page, wanted));
    const others = await idsNotIn(c, ids);
    yield* pagedIds(c, others, HISTORY_PAGE, (page, wanted) => historyPage(c, page, wanted));
  })();
}

async function historyPage(
  c: LedgerContext,
  page: readonly string[],
  wanted: readonly string[],
): Promise<ItemHistory[]> {
  const items = await itemRowsOf(c, wanted);
  const attempts = await attemptsOf(c, wanted);
  return page.map((itemId): ItemHistory => {
    const item = items.get(itemId);
    return {
      itemId,
      state: item?.state ?? null,
      errorCode: item?.errorCode ?? null,
      errorMessage: item?.errorMessage ?? null,
      attempts: attempts.get(itemId) ?? [],
    };
  });
}

/** An attempt's columns the page shows: not what it sent (body, hash, variables), nor take (added as read). */
const HIDDEN =
  /^(request_body|request_hash|reserved_micros|http_code|expires_at|answered_at|take|vars|job_id|made_by_job|copied_from)\b/;
const SHOWN = ATTEMPT_COLUMNS.filter((column) => !HIDDEN.test(column));

/** These items' attempts by seq, each with its files' paths in index order. */
async function attemptsOf(
  c: LedgerContext,
  itemIds: readonly string[],
): Promise<Map<string, AttemptHistory[]>> {
  const rows = await c.db.read(
    c.q
      .selectFrom('attempts')
      .select([...SHOWN, c.column('attempts', 'take', 'take', 1).as('take'), jobOfBytesColumn(c).as('jobId')])
      .where('batch_id', '=', c.batchId)
      .where(c.db.sql.inList('item_id', itemIds))
      .orderBy('item_id')
      .orderBy('seq')
      .compile(),
  );
  const ids = rows.map((row) => row.id);
  const files = await filesOfAttempts(c, ids);
  const checks = await checksOfAttempts(c, ids);
  const byItem = new Map<string, AttemptHistory[]>();
  for (const row of rows) {
    const saved = row.filesSaved as number | boolean;
    const attempt: AttemptHistory = {
      ...row,
      take: Number(row.take ?? 1),
      filesSaved: saved === 1 || saved === true,
      files: (files.get(row.id) ?? []).map((file) => file.path),
      check: checks.get(row.id) ?? null,
    };
    const own = byItem.get(row.itemId);
    if (own) own.push(attempt);
    else byItem.set(row.itemId, [attempt]);
  }
  return byItem;
}

/** The items the ledger knows (a row, or only attempts) that `ids` does not name, in id order. */
async function idsNotIn(c: LedgerContext, ids: readonly string[]): Promise<string[]> {
  const named = new Set(ids);
  const found: string[] = [];
  for await (const itemId of paged(c, (after: string | undefined) => knownPage(c, after)))
    if (!named.has(itemId)) found.push(itemId);
  return found;
}

async function knownPage(c: LedgerContext, after: string | undefined): Promise<Page<string, string>> {
  const itemKey = c.db.sql.key('item_id');
  const ofItems = c.q
    .selectFrom('items')
    .select(itemKey.as('itemId'))
    .where('batch_id', '=', c.batchId)
    .$if(after !== undefined, (query) => query.where(itemKey, '>', after!));
  const ofAttempts = c.q
    .selectFrom('attempts')
    .select(itemKey.as('itemId'))
    .where('batch_id', '=', c.batchId)
    .$if(after !== undefined, (query) => query.where(itemKey, '>', after!));
  const rows = await c.db.read(
    c.q
      .selectFrom(ofItems.union(ofAttempts).as('known'))
      .select('known.itemId')
      .orderBy(sql.ref('known.itemId'))
      .limit(PAGE_SIZE)
      .compile(),
  );
  const itemIds = rows.map((row) => row.itemId);
  return { rows: itemIds, next: nextAfter(itemIds) };
}
