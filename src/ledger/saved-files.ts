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
  return paged(c, (after: number | undefined) => factsPage(c, after ?? 0));
}

async function factsPage(c: LedgerContext, after: number): Promise<Page<number, SavedFileFacts>> {
  // The newest saved attempt of its item: no saved attempt of the same item comes after it.
  const attempts = await c.db.read(
    c.q
      .selectFrom('attempts as a')
      .select(['a.id', 'a.item_id as itemId', 'a.job_id as jobId', 'a.expires_at as expiresAt'])
      .where('a.batch_id', '=', c.batchId)
      .where('a.files_saved', '=', 1)
      .where('a.id', '>', after)
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
      .orderBy('a.id')
      .limit(PAGE_SIZE)
      .compile(),
  );
  const next = nextAfter(attempts.map((attempt) => attempt.id));
  if (attempts.length === 0) return { rows: [], next };
  const files = await c.db.read(
    c.q
      .selectFrom('files as f')
      .select([
        'f.attempt_id as attemptId',
        'f.path',
        'f.bytes',
        'f.sha256',
        // A ledger only read (status, plan) may predate the column: then no time was recorded.
        c.column<number | null>('files', 'mtime_ms', 'f.mtime_ms', null).as('mtimeMs'),
        'f.saved_at as savedAt',
      ])
      .where(
        'f.attempt_id',
        'in',
        attempts.map((attempt) => attempt.id),
      )
      .orderBy('f.attempt_id')
      .orderBy('f.idx')
      .compile(),
  );
  const byId = new Map(attempts.map((attempt) => [attempt.id, attempt]));
  const rows = files.map(({ attemptId, path, ...file }) => {
    const { itemId, jobId, expiresAt } = byId.get(attemptId)!;
    return { itemId, path: c.paths.absolute(path), ...file, jobId, expiresAt };
  });
  return { rows, next };
}
