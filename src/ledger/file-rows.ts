import { getAttempt } from './attempt-reads.js';
import type { LedgerConnection } from './ledger-connection.js';
import type { FileRecord } from './records.js';
import { appendEvent } from './runs-and-events.js';

/**
 * The files table: every saved output, by attempt and index. A path is stored relative to the
 * batch's manifest folder (batch-paths.ts) and given back absolute: callers never see the former.
 */

const SAVED_FILES = `FROM files f JOIN attempts a ON a.id = f.attempt_id WHERE a.batch_id = ?`;

export function listFiles(c: LedgerConnection): FileRecord[] {
  // A ledger only read (report) may predate the column: its files have no recorded time.
  const mtime = c.hasColumn('files', 'mtime_ms') ? 'f.mtime_ms' : 'NULL';
  const rows = c
    .prepare(
      `SELECT f.attempt_id AS attemptId, f.idx, f.path, f.bytes, f.sha256, f.saved_at AS savedAt,
         ${mtime} AS mtimeMs ${SAVED_FILES} ORDER BY f.attempt_id, f.idx`,
    )
    .all(c.batchId) as FileRecord[];
  for (const row of rows) row.path = c.paths.absolute(row.path);
  return rows;
}

/** Bytes of every saved file and how many outputs (attempts) they came from, summed by SQLite. */
export function savedFileTotals(c: LedgerConnection): { bytes: number; outputs: number } {
  return c
    .prepare(
      `SELECT COALESCE(SUM(f.bytes), 0) AS bytes, COUNT(DISTINCT f.attempt_id) AS outputs ${SAVED_FILES}`,
    )
    .get(c.batchId) as { bytes: number; outputs: number };
}

/** Each saved file as [item id, path], in listFiles order, streamed. */
export function itemFilePaths(c: LedgerConnection): IterableIterator<[string, string]> {
  return c
    .prepare(`SELECT a.item_id, batch_path(f.path) ${SAVED_FILES} ORDER BY f.attempt_id, f.idx`)
    .raw()
    .iterate(c.batchId) as IterableIterator<[string, string]>;
}

/** Whether this batch recorded a saved file at `path` (under its current name). */
export function wroteFile(c: LedgerConnection, path: string): boolean {
  // Compared in the stored form: run and import open the ledger for writing, so it is migrated
  // and every path inside the batch root is stored relative.
  const stored = c.paths.stored(path);
  return c.prepare(`SELECT 1 ${SAVED_FILES} AND f.path = ? LIMIT 1`).get(c.batchId, stored) !== undefined;
}

/** Every file of an attempt, saved and verified, and the attempt marked complete, in one step. */
export function recordFilesSaved(
  c: LedgerConnection,
  attemptId: number,
  files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>,
): void {
  c.write(() => {
    const at = c.at();
    const insert = c.prepare(
      `INSERT OR REPLACE INTO files (attempt_id, idx, path, bytes, sha256, saved_at, mtime_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const file of files) {
      const mtime = file.mtimeMs === undefined || file.mtimeMs === null ? null : Math.trunc(file.mtimeMs);
      insert.run(attemptId, file.idx, c.paths.stored(file.path), file.bytes, file.sha256, at, mtime);
    }
    c.prepare('UPDATE attempts SET files_saved = 1 WHERE id = ?').run(attemptId);
    const owner = c.prepare('SELECT item_id AS itemId FROM attempts WHERE id = ?').get(attemptId);
    appendEvent(c, (owner as { itemId: string }).itemId, attemptId, 'files_saved', { count: files.length });
  });
}

/** An earlier take's file now lives under a new name (kept beside the newer take). */
export function recordFileMoved(c: LedgerConnection, attemptId: number, idx: number, path: string): void {
  const stored = c.paths.stored(path);
  c.write(() => {
    c.prepare('UPDATE files SET path = ? WHERE attempt_id = ? AND idx = ?').run(stored, attemptId, idx);
    const attempt = getAttempt(c, attemptId);
    // The event names the path as the row does, relative to the batch root, so it stays true too.
    appendEvent(c, attempt.itemId, attemptId, 'file_moved', { idx, path: stored });
  });
}
