import { sql } from 'kysely';
import { ATTEMPT_COLUMNS } from './attempt-reads.js';
import type { Statement } from './dialect/database.js';
import { type ItemUpdate, itemStateStatements } from './item-rows.js';
import type { LedgerContext } from './ledger-context.js';
import { nextAfter, PAGE_SIZE, paged } from './paging.js';
import type { FileRecord } from './records.js';
import {
  type AttemptBy,
  type AttemptKey,
  type AttemptRef,
  attemptEventOf,
  attemptKey,
  byAttempt,
} from './runs-and-events.js';
import { StatementShape } from './statement-shape.js';
import type { FilesTable } from './tables.js';

/**
 * The files table: every saved output, by attempt and index. A path is stored relative to the
 * batch's manifest folder (batch-paths.ts) and given back absolute: callers never see the former.
 */

/** The batch's files: the attempts' batch picks them. */
function savedFiles(c: LedgerContext) {
  return c.q
    .selectFrom('files as f')
    .innerJoin('attempts as a', 'a.id', 'f.attempt_id')
    .where('a.batch_id', '=', c.batchId);
}

/** Every saved file of the batch, or only those of the attempts named (an adoption's few). */
export async function listFiles(c: LedgerContext, attemptIds?: readonly number[]): Promise<FileRecord[]> {
  if (attemptIds?.length === 0) return [];
  return filesWhere(c, undefined, attemptIds);
}

/** The files recorded at one path (one, or none; a take kept elsewhere has moved on): one indexed read. */
export function filesAt(c: LedgerContext, path: string): Promise<FileRecord[]> {
  return filesWhere(c, c.paths.stored(path));
}

async function filesWhere(
  c: LedgerContext,
  storedPath?: string,
  attemptIds?: readonly number[],
): Promise<FileRecord[]> {
  const rows = await c.db.read(
    savedFiles(c)
      .$if(storedPath !== undefined, (query) => query.where('f.path', '=', storedPath!))
      .$if(attemptIds !== undefined, (query) => query.where(c.db.sql.inList('f.attempt_id', attemptIds!)))
      .select([
        'f.attempt_id as attemptId',
        'f.idx',
        'f.path',
        'f.bytes',
        'f.sha256',
        'f.saved_at as savedAt',
        // A ledger only read (report) may predate the column: its files have no recorded time.
        c.column<number | null>('files', 'mtime_ms', 'f.mtime_ms', null).as('mtimeMs'),
      ])
      .orderBy('f.attempt_id')
      .orderBy('f.idx')
      .compile(),
  );
  for (const row of rows) row.path = c.paths.absolute(row.path);
  return rows;
}

/** Bytes of every saved file and how many outputs (attempts) they came from, summed by the database. */
export async function savedFileTotals(c: LedgerContext): Promise<{ bytes: number; outputs: number }> {
  const [row] = await c.db.read(
    savedFiles(c)
      .select([
        sql<number>`cast(coalesce(sum(f.bytes), 0) as bigint)`.as('bytes'),
        sql<number>`cast(count(distinct f.attempt_id) as bigint)`.as('outputs'),
      ])
      .compile(),
  );
  return row!;
}

/** A file's key, the order the batch's files are walked in: its attempt, then its index. */
export type FileKey = [attemptId: number, idx: number];

/** The key before every file's. */
export const FIRST_FILE_KEY: FileKey = [0, -1];

/**
 * A page of the batch's files after `after`, in key order, for a streamed read to select from:
 * walked from the last page's file (the attempts from its own), the batch picked on the way.
 */
export function filesPageAfter(c: LedgerContext, [attemptId, idx]: FileKey) {
  return c.q
    .selectFrom('files as f')
    .innerJoin('attempts as a', 'a.id', 'f.attempt_id')
    .where(c.db.sql.filterOnly('a.batch_id'), '=', c.batchId)
    .where('a.id', '>=', attemptId)
    .where((eb) => eb(eb.refTuple('f.attempt_id', 'f.idx'), '>', eb.tuple(attemptId, idx)))
    .orderBy('f.attempt_id')
    .orderBy('f.idx')
    .limit(PAGE_SIZE);
}

/** The key to read the page after these files from: the last one's, or null when the page was not full. */
export function nextFileKey(rows: ReadonlyArray<{ attemptId: number; idx: number }>): FileKey | null {
  const last = nextAfter(rows);
  return last && [last.attemptId, last.idx];
}

/** Each saved file as [item id, path], in listFiles order, a page of files at a time. */
export function itemFilePaths(c: LedgerContext): AsyncIterable<[string, string]> {
  return paged<FileKey, [string, string]>(c, async (after = FIRST_FILE_KEY) => {
    const rows = await c.db.read(
      filesPageAfter(c, after)
        .select(['f.attempt_id as attemptId', 'f.idx', 'a.item_id as itemId', 'f.path'])
        .compile(),
    );
    return {
      rows: rows.map((row): [string, string] => [row.itemId, c.paths.absolute(row.path)]),
      next: nextFileKey(rows),
    };
  });
}

/** Whether this batch recorded a saved file at `path` (under its current name). */
export async function wroteFile(c: LedgerContext, path: string): Promise<boolean> {
  // Compared in the stored form: run and import open the ledger for writing, so it is migrated
  // and every path inside the batch root is stored relative.
  const rows = await c.db.read(
    savedFiles(c).select('f.idx').where('f.path', '=', c.paths.stored(path)).limit(1).compile(),
  );
  return rows.length > 0;
}

/** When an attempt's files were saved (the first of them), or null when none were. */
export async function savedAt(c: LedgerContext, attemptId: number): Promise<string | null> {
  const [row] = await c.db.read(
    c.q
      .selectFrom('files')
      .select((eb) => eb.fn.min('saved_at').as('at'))
      .where('attempt_id', '=', attemptId)
      .compile(),
  );
  return (row?.at as string | null | undefined) ?? null;
}

/** A saved file's row; one saved again replaces it. */
const fileRow = new StatementShape((c, v: AttemptKey & Omit<FilesTable, 'attempt_id'>, by: AttemptBy) =>
  c.q
    .insertInto('files')
    .values({
      attempt_id: c.q.selectFrom('attempts').select('id').where(byAttempt(v, by)),
      idx: v.idx,
      path: v.path,
      bytes: v.bytes,
      sha256: v.sha256,
      saved_at: v.saved_at,
      mtime_ms: v.mtime_ms,
    })
    .onConflict((conflict) =>
      conflict.columns(['attempt_id', 'idx']).doUpdateSet((eb) => ({
        path: eb.ref('excluded.path'),
        bytes: eb.ref('excluded.bytes'),
        sha256: eb.ref('excluded.sha256'),
        saved_at: eb.ref('excluded.saved_at'),
        mtime_ms: eb.ref('excluded.mtime_ms'),
      })),
    ),
);

/** The attempt's files all saved, the attempt returned whole. */
const attemptSaved = new StatementShape((c, v: AttemptKey & { files_saved: number }, by: AttemptBy) =>
  c.q
    .updateTable('attempts')
    .set({ files_saved: v.files_saved })
    .where(byAttempt(v, by))
    .returning(ATTEMPT_COLUMNS),
);

/**
 * Every file of an attempt written (a file saved again replaces its row), the attempt marked
 * complete and returned whole, and the event: the attempt may be one written in the same batch.
 */
export function filesSavedStatements(
  c: LedgerContext,
  ref: AttemptRef,
  files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>,
): Statement[] {
  const at = c.at();
  const [attempt, by] = attemptKey(c, ref);
  const rows = files.map((file) =>
    fileRow.bind(
      c,
      {
        ...attempt,
        idx: file.idx,
        path: c.paths.stored(file.path),
        bytes: file.bytes,
        sha256: file.sha256,
        saved_at: at,
        mtime_ms: file.mtimeMs === undefined || file.mtimeMs === null ? null : Math.trunc(file.mtimeMs),
      },
      by,
    ),
  );
  return [
    ...rows,
    attemptSaved.bind(c, { ...attempt, files_saved: 1 }, by),
    attemptEventOf(c, ref, 'files_saved', { count: files.length }),
  ];
}

/**
 * Every file of an attempt, saved and verified, and the attempt marked complete, in one step of its
 * own (LedgerDatabase.write); with `item`, that item's new state too (a download's last step), in
 * the same transaction.
 */
export function recordFilesSaved(
  c: LedgerContext,
  attemptId: number,
  files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>,
  item?: { itemId: string; update: ItemUpdate },
): Promise<void> {
  const statements = [
    ...filesSavedStatements(c, attemptId, files),
    ...(item ? itemStateStatements(c, item.itemId, item.update) : []),
  ];
  return c.db.write(statements, () => undefined);
}

/** An earlier take's file now lives under a new name (preserved beside the newer take). */
export async function recordFileMoved(
  c: LedgerContext,
  attemptId: number,
  idx: number,
  path: string,
): Promise<void> {
  const stored = c.paths.stored(path);
  await c.db.batch([
    c.q
      .updateTable('files')
      .set({ path: stored })
      .where('attempt_id', '=', attemptId)
      .where('idx', '=', idx)
      .compile(),
    // The event names the path as the row does, relative to the batch root, so it stays true too.
    attemptEventOf(c, attemptId, 'file_moved', { idx, path: stored }),
  ]);
}
