import type { LedgerContext } from './ledger-context.js';
import { nextAfter, PAGE_SIZE, type Page, paged } from './paging.js';

/**
 * The files each item's output stands on (those of its newest attempt whose files were saved, the
 * ones `status` lists), with what the ledger recorded when it saved them, for `status` and `plan`
 * to compare with the disk. Read a page of attempts at a time: a million items are never held.
 */
export interface SavedFileFacts {
  itemId: string;
  /** Absolute (batch-paths.ts), or an object's URI. */
  path: string;
  bytes: number;
  sha256: string;
  /** Whole ms; null when the file was saved before the time was recorded (or is an object). */
  mtimeMs: number | null;
  savedAt: string;
  /** The attempt's job, and when the service deletes its outputs (null: not said). */
  jobId: string | null;
  expiresAt: string | null;
}

/** In the order of those attempts' ids, each attempt's files in index order. */
export function savedFileFacts(c: LedgerContext): AsyncIterable<SavedFileFacts> {
  return paged<[number, number], SavedFileFacts>(c, (after = [0, -1]) => factsPage(c, after));
}

async function factsPage(
  c: LedgerContext,
  [attemptId, idx]: [number, number],
): Promise<Page<[number, number], SavedFileFacts>> {
  const rows = await c.db.read(
    c.q
      .selectFrom('files as f')
      .innerJoin('attempts as a', 'a.id', 'f.attempt_id')
      .select([
        'f.attempt_id as attemptId',
        'f.idx',
        'a.item_id as itemId',
        'f.path',
        'f.bytes',
        'f.sha256',
        // A ledger only read (status, plan) may predate the column: then no time was recorded.
        c.column<number | null>('files', 'mtime_ms', 'f.mtime_ms', null).as('mtimeMs'),
        'f.saved_at as savedAt',
        'a.job_id as jobId',
        'a.expires_at as expiresAt',
      ])
      // Walked in the files' key order from the last page's file (the attempts from its own), the
      // batch picked on the way.
      .where(c.db.sql.filterOnly('a.batch_id'), '=', c.batchId)
      .where('a.id', '>=', attemptId)
      .where('a.files_saved', '=', 1)
      .where((eb) => eb(eb.refTuple('f.attempt_id', 'f.idx'), '>', eb.tuple(attemptId, idx)))
      // The newest saved attempt of its item: no saved attempt of the same item comes after it.
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('attempts as b')
              .select('b.id')
              .where('b.batch_id', '=', c.batchId)
              .whereRef('b.item_id', '=', 'a.item_id')
              .where('b.files_saved', '=', 1)
              .whereRef('b.id', '>', 'a.id'),
          ),
        ),
      )
      .orderBy('f.attempt_id')
      .orderBy('f.idx')
      .limit(PAGE_SIZE)
      .compile(),
  );
  const last = nextAfter(rows);
  return {
    rows: rows.map(({ attemptId: _attempt, idx: _idx, path, ...facts }) => ({
      ...facts,
      path: c.paths.absolute(path),
    })),
    next: last && [last.attemptId, last.idx],
  };
}
