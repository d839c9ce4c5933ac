import { jobOfBytesColumn } from './attempt-reads.js';
import { FIRST_FILE_KEY, type FileKey, filesPageAfter, nextFileKey } from './file-rows.js';
import type { LedgerContext } from './ledger-context.js';
import { type Page, paged } from './paging.js';

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
  return paged<FileKey, SavedFileFacts>(c, (after = FIRST_FILE_KEY) => factsPage(c, after));
}

/**
 * The same facts for these items only (a page of a manifest's, in any order): the files their
 * outputs stand on, in attempt and index order.
 */
export async function savedFileFactsOf(
  c: LedgerContext,
  itemIds: readonly string[],
): Promise<SavedFileFacts[]> {
  if (itemIds.length === 0) return [];
  const rows = await c.db.read(
    newestSaved(
      c,
      c.q
        .selectFrom('files as f')
        .innerJoin('attempts as a', 'a.id', 'f.attempt_id')
        .where('a.batch_id', '=', c.batchId)
        .where(c.db.sql.inList('a.item_id', itemIds))
        .orderBy('f.attempt_id')
        .orderBy('f.idx'),
    ).compile(),
  );
  return rows.map(({ attemptId: _attempt, idx: _idx, path, ...facts }) => ({
    ...facts,
    path: c.paths.absolute(path),
  }));
}

async function factsPage(c: LedgerContext, after: FileKey): Promise<Page<FileKey, SavedFileFacts>> {
  const rows = await c.db.read(newestSaved(c, filesPageAfter(c, after)).compile());
  return {
    rows: rows.map(({ attemptId: _attempt, idx: _idx, path, ...facts }) => ({
      ...facts,
      path: c.paths.absolute(path),
    })),
    next: nextFileKey(rows),
  };
}

/** The facts of files of `a` (attempts) joined to `f` (files), those of each item's newest saved attempt. */
function newestSaved(c: LedgerContext, files: ReturnType<typeof filesPageAfter>) {
  return (
    files
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
        jobOfBytesColumn(c, 'a').as('jobId'),
        'a.expires_at as expiresAt',
      ])
      .where('a.files_saved', '=', 1)
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
  );
}
