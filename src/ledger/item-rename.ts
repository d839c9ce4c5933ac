import type { BatchPaths } from './batch-paths.js';
import { renameKeepers } from './keeper-rows.js';
import type { LedgerConnection } from './ledger-connection.js';
import { appendEvent } from './runs-and-events.js';

/** A saved file that takes a new name with its item (paths absolute, as above the ledger). */
export interface FileMove {
  attemptId: number;
  idx: number;
  from: string;
  to: string;
}

/**
 * Each move's file row given its new stored path by `update`; what the `renamed` event says of
 * them, in stored form (both ledgers).
 */
export function movedFiles(
  paths: BatchPaths,
  moves: readonly FileMove[],
  update: (stored: string, move: FileMove) => void,
): Array<{ attempt_id: number; idx: number; from: string; to: string }> {
  return moves.map((move) => {
    const [was, now] = [paths.stored(move.from), paths.stored(move.to)];
    update(now, move);
    return { attempt_id: move.attemptId, idx: move.idx, from: was, to: now };
  });
}

/**
 * An item renamed in the manifest with its request unchanged (runner/renames.ts): its row, its
 * attempts and its files' paths follow the new id in one step, so the ledger never holds half a
 * rename. The events stay where they were written (the log is append-only): a `renamed` event
 * under each id says where the item went and came from, with the files that moved. The attempts'
 * request bodies keep the old id in `mediabatch.item`: they are the exact text that was sent, and
 * an unanswered one is resent byte for byte.
 */
export function renameItem(c: LedgerConnection, from: string, to: string, moves: readonly FileMove[]): void {
  c.write(() => {
    const taken = c
      .prepare(
        `SELECT 1 FROM items WHERE batch_id = @b AND item_id = @to
         UNION ALL SELECT 1 FROM attempts WHERE batch_id = @b AND item_id = @to LIMIT 1`,
      )
      .get({ b: c.batchId, to });
    if (taken !== undefined)
      throw new Error(`cannot rename ${from} to ${to}: the ledger already knows ${to}`);
    const at = c.at();
    const row = c
      .prepare('UPDATE items SET item_id = ?, updated_at = ? WHERE batch_id = ? AND item_id = ?')
      .run(to, at, c.batchId, from);
    if (row.changes !== 1) throw new Error(`cannot rename ${from}: the ledger has no such item`);
    c.prepare('UPDATE attempts SET item_id = ? WHERE batch_id = ? AND item_id = ?').run(to, c.batchId, from);
    renameKeepers(c, from, to);
    const update = c.prepare('UPDATE files SET path = ? WHERE attempt_id = ? AND idx = ?');
    const files = movedFiles(c.paths, moves, (path, move) => update.run(path, move.attemptId, move.idx));
    appendEvent(c, to, null, 'renamed', { from, to, files });
    appendEvent(c, from, null, 'renamed', { from, to });
  });
}
