import { sql } from 'kysely';
import type { LedgerContext } from './ledger-context.js';
import { nextAfter, PAGE_SIZE, type Page, paged } from './paging.js';
import type { AttemptRecord, ItemRecord } from './records.js';

/**
 * Each item's row and its latest attempt (highest seq), read a page of items at a time, so that
 * `plan` over a million items never holds every attempt in memory (docs/performance.md).
 */
export interface ItemEntry {
  itemId: string;
  /** The item's row; its updatedAt is blank. */
  record: ItemRecord | undefined;
  /**
   * What deciding an item reads of its latest attempt: id, seq, state, request hash (whether a
   * removed item's result answers its request, runner/renames.ts), HTTP answer and job. The other
   * columns are blank (texts '', money 0, dates null), as in the summary view.
   */
  attempt: AttemptRecord | undefined;
}

/** One row of the walk: the item's columns (null for an item only attempts know), then its latest attempt's. */
interface EntryRow {
  itemId: string;
  itemHash: string | null;
  itemState: ItemRecord['state'] | null;
  retriesUsed: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  id: number | null;
  seq: number | null;
  state: AttemptRecord['state'] | null;
  httpStatus: number | null;
  httpCode: string | null;
  jobId: string | null;
  jobStatus: string | null;
  filesSaved: number | boolean | null;
  requestHash: string | null;
}

/**
 * Item rows in byte order of their ids (the order listItems gives, which plan's removed items
 * keep), then items only attempts know: none is expected, but a run would still decide them.
 */
export function itemEntries(c: LedgerContext): AsyncIterable<ItemEntry> {
  const items = paged(c, (after: string | undefined) => itemsPage(c, after));
  const orphans = paged(c, (after: string | undefined) => orphansPage(c, after));
  return (async function* () {
    yield* items;
    yield* orphans;
  })();
}

const ATTEMPT = [
  'a.id',
  'a.seq',
  'a.state',
  'a.http_status as httpStatus',
  'a.http_code as httpCode',
  'a.job_id as jobId',
  'a.job_status as jobStatus',
  'a.files_saved as filesSaved',
  'a.request_hash as requestHash',
] as const;

/** An item's row and its latest attempt. */
const ITEM_ENTRY = [
  'i.item_id as itemId',
  'i.request_hash as itemHash',
  'i.state as itemState',
  'i.retries_used as retriesUsed',
  'i.error_code as errorCode',
  'i.error_message as errorMessage',
  ...ATTEMPT,
] as const;

/** The latest attempt of an item with no row of its own (its item's columns null). */
const ROWLESS = [
  sql<null>`null`.as('itemHash'),
  sql<null>`null`.as('itemState'),
  sql<null>`null`.as('retriesUsed'),
  sql<null>`null`.as('errorCode'),
  sql<null>`null`.as('errorMessage'),
  ...ATTEMPT,
] as const;

/** The latest attempt (by seq) of the item named by `itemId`, a column of the outer query. */
function latestOf(c: LedgerContext, itemId: string) {
  const latest = c.q
    .selectFrom('attempts as x')
    .select('x.id')
    .where('x.batch_id', '=', c.batchId)
    .where(sql<boolean>`${c.db.sql.key('x.item_id')} = ${sql.ref(itemId)}`)
    .orderBy('x.seq', 'desc')
    .limit(1);
  return sql<boolean>`a.id = (${latest})`;
}

/** The batch's item rows, each with its latest attempt (none: its columns null). */
function itemsWithLatest(c: LedgerContext) {
  return c.q
    .selectFrom('items as i')
    .leftJoin('attempts as a', (join) => join.on(latestOf(c, 'i.item_id')))
    .select(ITEM_ENTRY)
    .where('i.batch_id', '=', c.batchId);
}

async function itemsPage(c: LedgerContext, after: string | undefined): Promise<Page<string, ItemEntry>> {
  const key = c.db.sql.key('i.item_id');
  const rows: EntryRow[] = await c.db.read(
    itemsWithLatest(c)
      .$if(after !== undefined, (query) => query.where(key, '>', after!))
      .orderBy(key)
      .limit(PAGE_SIZE)
      .compile(),
  );
  return { rows: rows.map(entryOf), next: nextAfter(rows.map((row) => row.itemId)) };
}

async function orphansPage(c: LedgerContext, after: string | undefined): Promise<Page<string, ItemEntry>> {
  const key = c.db.sql.key('t.item_id');
  const rows: EntryRow[] = await c.db.read(
    c.q
      .with('o', (q) =>
        q
          .selectFrom('attempts as t')
          .select(key.as('item_id'))
          .distinct()
          .where('t.batch_id', '=', c.batchId)
          .$if(after !== undefined, (query) => query.where(key, '>', after!))
          // Attempts of items with no row of their own (an attempt written before its item's row).
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('items as i')
                  .select('i.item_id')
                  .whereRef('i.item_id', '=', 't.item_id')
                  .where('i.batch_id', '=', c.batchId),
              ),
            ),
          )
          .orderBy(key)
          .limit(PAGE_SIZE),
      )
      .selectFrom('o')
      .innerJoin('attempts as a', (join) => join.on(latestOf(c, 'o.item_id')))
      .select(['o.item_id as itemId', ...ROWLESS])
      .orderBy('o.item_id')
      .compile(),
  );
  return { rows: rows.map(entryOf), next: nextAfter(rows.map((row) => row.itemId)) };
}

/**
 * The entries of these items (a page of a manifest's, in any order), by id: an item with a row,
 * or only attempts, as itemEntries gives it; an id the ledger does not know has none. Two
 * statements: the items' rows with their latest attempts, then the latest attempts of those
 * without a row (none is expected).
 */
export async function itemEntriesOf(
  c: LedgerContext,
  itemIds: readonly string[],
): Promise<Map<string, ItemEntry>> {
  const found = new Map<string, ItemEntry>();
  if (itemIds.length === 0) return found;
  const rows: EntryRow[] = await c.db.read(
    itemsWithLatest(c).where(c.db.sql.inList('i.item_id', itemIds)).compile(),
  );
  for (const row of rows) found.set(row.itemId, entryOf(row));
  const rowless = itemIds.filter((id) => !found.has(id));
  if (rowless.length === 0) return found;
  const orphans: EntryRow[] = await c.db.read(
    c.q
      .selectFrom('attempts as a')
      .select(['a.item_id as itemId', ...ROWLESS])
      .where('a.batch_id', '=', c.batchId)
      .where(c.db.sql.inList('a.item_id', rowless))
      .where(latestOf(c, 'a.item_id'))
      .compile(),
  );
  for (const row of orphans) found.set(row.itemId, entryOf(row));
  return found;
}

function entryOf(row: EntryRow): ItemEntry {
  return { itemId: row.itemId, record: recordOf(row), attempt: attemptOf(row) };
}

function recordOf(row: EntryRow): ItemRecord | undefined {
  if (row.itemState === null) return undefined;
  return {
    itemId: row.itemId,
    requestHash: row.itemHash ?? '',
    state: row.itemState,
    retriesUsed: row.retriesUsed ?? 0,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    updatedAt: '',
  };
}

function attemptOf(row: EntryRow): AttemptRecord | undefined {
  if (row.id === null) return undefined;
  return {
    id: row.id,
    itemId: row.itemId,
    seq: row.seq ?? 0,
    idempotencyKey: '',
    requestBody: '',
    requestHash: row.requestHash ?? '',
    reservedMicros: 0,
    state: row.state ?? 'prepared',
    httpStatus: row.httpStatus,
    httpCode: row.httpCode,
    jobId: row.jobId,
    jobStatus: row.jobStatus,
    amountMicros: 0,
    refundedMicros: 0,
    errorCode: null,
    errorMessage: null,
    expiresAt: null,
    filesSaved: row.filesSaved === 1 || row.filesSaved === true,
    createdAt: '',
    answeredAt: null,
    completedAt: null,
  };
}
