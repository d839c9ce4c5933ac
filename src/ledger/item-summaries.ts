import { sql } from 'kysely';
import { jobOfBytesColumn } from './attempt-reads.js';
import type { LedgerContext } from './ledger-context.js';
import { type ItemRowShown, itemRowsOf } from './page-rows.js';
import { nextAfter, PAGE_SIZE, type Page, paged } from './paging.js';
import type { ItemState } from './records.js';

/**
 * One row per item, computed from the item's row, attempts and files a page of items at a time,
 * so that `status` over a million items never holds every attempt in memory (docs/performance.md).
 */
export interface ItemSummary {
  itemId: string;
  /** Null when only attempts know the item (the status report reads it as pending). */
  state: ItemState | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: number;
  /** Charged net of refunds over every attempt. */
  netMicros: number;
  /** The job of the newest attempt that has one. */
  lastJobId: string | null;
  /** JSON array of the file paths of the newest attempt whose files were saved, or null. */
  savedPaths: string | null;
  /**
   * JSON array, newest take first, of each take's last saved attempt ({take, job_id, net, files});
   * null unless more than one take has saved files.
   */
  takes: string | null;
}

/** Items with attempts first, in byte order of their ids; then items no attempt knows. */
export function itemSummaries(c: LedgerContext): AsyncIterable<ItemSummary> {
  return chained(
    paged(c, (after: string | undefined) => attemptedPage(c, after)),
    paged(c, (after: string | undefined) => unattemptedPage(c, after)),
  );
}

async function* chained<T>(...parts: AsyncIterable<T>[]): AsyncGenerator<T> {
  for (const part of parts) yield* part;
}

interface PerItem {
  itemId: string;
  attempts: number;
  net: number;
  jobAttempt: number | null;
  savedAttempt: number | null;
  firstTake: number | null;
  lastTake: number | null;
}

/** The job of each item's newest attempt that has one, by that attempt's id. */
async function jobsOf(c: LedgerContext, page: readonly PerItem[]): Promise<Map<number, string | null>> {
  const ids = page.flatMap((row) => (row.jobAttempt === null ? [] : [row.jobAttempt]));
  if (ids.length === 0) return new Map();
  const rows = await c.db.read(
    c.q
      .selectFrom('attempts')
      .select(['id', jobOfBytesColumn(c).as('jobId')])
      .where(c.db.sql.inList('id', ids))
      .compile(),
  );
  return new Map(rows.map((row) => [row.id, row.jobId]));
}

/**
 * Newest attempt ids stand for "the newest attempt that ...": ids grow with every attempt. The
 * page's items are aggregated from their attempts in key order; their rows and their jobs are
 * then read by id, each a lookup, never a join that a planner might make a scan of the batch.
 */
async function attemptedPage(
  c: LedgerContext,
  after: string | undefined,
): Promise<Page<string, ItemSummary>> {
  const key = c.db.sql.key('item_id');
  const rows: PerItem[] = await c.db.read(
    perItem(c)
      .$if(after !== undefined, (query) => query.where(key, '>', after!))
      .orderBy(key)
      .limit(PAGE_SIZE)
      .compile(),
  );
  const items = await itemRowsOf(
    c,
    rows.map((row) => row.itemId),
  );
  return { rows: await summariesOf(c, rows, items), next: nextAfter(rows.map((row) => row.itemId)) };
}

/**
 * The summaries of these items (a page of a manifest's, in any order), by id: an item the ledger
 * does not know has none. Its attempts added up, then its row, its job, takes and files by id.
 */
export async function itemSummariesOf(
  c: LedgerContext,
  itemIds: readonly string[],
): Promise<Map<string, ItemSummary>> {
  const found = new Map<string, ItemSummary>();
  if (itemIds.length === 0) return found;
  const rows: PerItem[] = await c.db.read(perItem(c).where(c.db.sql.inList('item_id', itemIds)).compile());
  const items = await itemRowsOf(c, itemIds);
  for (const summary of await summariesOf(c, rows, items)) found.set(summary.itemId, summary);
  for (const [itemId, row] of items)
    if (!found.has(itemId)) found.set(itemId, { ...row, ...NOTHING_ATTEMPTED, itemId });
  return found;
}

/** What an item no attempt knows sums to. */
const NOTHING_ATTEMPTED = { attempts: 0, netMicros: 0, lastJobId: null, savedPaths: null, takes: null };

/** Each item's attempts added up, by item (the page's where and order are the caller's). */
function perItem(c: LedgerContext) {
  const take = c.column<number>('attempts', 'take', 'take', 1);
  const key = c.db.sql.key('item_id');
  return c.q
    .selectFrom('attempts')
    .select([
      key.as('itemId'),
      sql<number>`count(*)`.as('attempts'),
      sql<number>`cast(sum(amount_micros - refunded_micros) as bigint)`.as('net'),
      // The job whose bytes are saved (a copy's names its result's), else the newest sent.
      sql<
        number | null
      >`coalesce(max(CASE WHEN files_saved = 1 THEN id END), max(CASE WHEN job_id IS NOT NULL THEN id END))`.as(
        'jobAttempt',
      ),
      sql<number | null>`max(CASE WHEN files_saved = 1 THEN id END)`.as('savedAttempt'),
      sql<number | null>`min(CASE WHEN files_saved = 1 THEN ${take} END)`.as('firstTake'),
      sql<number | null>`max(CASE WHEN files_saved = 1 THEN ${take} END)`.as('lastTake'),
    ])
    .where('batch_id', '=', c.batchId)
    .groupBy(key);
}

async function summariesOf(
  c: LedgerContext,
  rows: readonly PerItem[],
  items: ReadonlyMap<string, ItemRowShown>,
): Promise<ItemSummary[]> {
  const jobs = await jobsOf(c, rows);
  const takes = await takesOf(
    c,
    rows.filter((row) => (row.firstTake ?? 0) < (row.lastTake ?? 0)),
  );
  const paths = await pathsOf(c, [
    ...rows.flatMap((row) => (row.savedAttempt === null ? [] : [row.savedAttempt])),
    ...[...takes.values()].flatMap((list) => list.map((each) => each.id)),
  ]);
  const json = (id: number) => JSON.stringify(paths.get(id) ?? []);
  return rows.map((row) => ({
    itemId: row.itemId,
    state: items.get(row.itemId)?.state ?? null,
    errorCode: items.get(row.itemId)?.errorCode ?? null,
    errorMessage: items.get(row.itemId)?.errorMessage ?? null,
    attempts: Number(row.attempts),
    netMicros: Number(row.net),
    lastJobId: row.jobAttempt === null ? null : (jobs.get(row.jobAttempt) ?? null),
    savedPaths: row.savedAttempt === null ? null : json(row.savedAttempt),
    takes: takesJson(takes.get(row.itemId), paths),
  }));
}

interface TakeRow {
  itemId: string;
  take: number;
  id: number;
  jobId: string | null;
  net: number;
}

/** Each take's last saved attempt, newest take first, of the items with more than one take saved. */
async function takesOf(c: LedgerContext, items: readonly PerItem[]): Promise<Map<string, TakeRow[]>> {
  const byItem = new Map<string, TakeRow[]>();
  if (items.length === 0) return byItem;
  const take = c.column<number>('attempts', 'take', 'a.take', 1);
  const rows: TakeRow[] = await c.db.read(
    c.q
      .selectFrom('attempts as a')
      .select(['a.item_id as itemId', take.as('take'), 'a.id', jobOfBytesColumn(c, 'a').as('jobId')])
      .select(sql<number>`a.amount_micros - a.refunded_micros`.as('net'))
      .where('a.batch_id', '=', c.batchId)
      .where('a.files_saved', '=', 1)
      .where(
        c.db.sql.inList(
          'a.item_id',
          items.map((item) => item.itemId),
        ),
      )
      .orderBy('a.id')
      .compile(),
  );
  for (const row of rows) {
    const list = byItem.get(row.itemId) ?? [];
    // In id order: a later attempt of the same take replaces the one before.
    const at = list.findIndex((each) => each.take === row.take);
    if (at === -1) list.push(row);
    else list[at] = row;
    byItem.set(row.itemId, list);
  }
  for (const list of byItem.values()) list.sort((a, b) => b.take - a.take);
  return byItem;
}

function takesJson(takes: TakeRow[] | undefined, paths: ReadonlyMap<number, string[]>): string | null {
  if (takes === undefined) return null;
  return JSON.stringify(
    takes.map((each) => ({
      take: each.take,
      job_id: each.jobId,
      net: Number(each.net),
      files: paths.get(each.id) ?? [],
    })),
  );
}

/** The absolute paths of these attempts' files, in file order. */
async function pathsOf(c: LedgerContext, attemptIds: readonly number[]): Promise<Map<number, string[]>> {
  const paths = new Map<number, string[]>();
  if (attemptIds.length === 0) return paths;
  const rows = await c.db.read(
    c.q
      .selectFrom('files')
      .select(['attempt_id as attemptId', 'path'])
      .where(c.db.sql.inList('attempt_id', [...new Set(attemptIds)]))
      .orderBy('attempt_id')
      .orderBy('idx')
      .compile(),
  );
  for (const row of rows) {
    const list = paths.get(row.attemptId) ?? [];
    list.push(c.paths.absolute(row.path));
    paths.set(row.attemptId, list);
  }
  return paths;
}

/** Items no attempt knows, in byte order of their ids. */
async function unattemptedPage(
  c: LedgerContext,
  after: string | undefined,
): Promise<Page<string, ItemSummary>> {
  const key = c.db.sql.key('i.item_id');
  const rows = await c.db.read(
    c.q
      .selectFrom('items as i')
      .select([
        'i.item_id as itemId',
        'i.state',
        'i.error_code as errorCode',
        'i.error_message as errorMessage',
      ])
      .where('i.batch_id', '=', c.batchId)
      .$if(after !== undefined, (query) => query.where(key, '>', after!))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('attempts as a')
              .select('a.id')
              .where('a.batch_id', '=', c.batchId)
              .whereRef('a.item_id', '=', 'i.item_id'),
          ),
        ),
      )
      .orderBy(key)
      .limit(PAGE_SIZE)
      .compile(),
  );
  return {
    rows: rows.map((row) => ({
      ...row,
      attempts: 0,
      netMicros: 0,
      lastJobId: null,
      savedPaths: null,
      takes: null,
    })),
    next: nextAfter(rows.map((row) => row.itemId)),
  };
}
