import type { BatchPaths } from './batch-paths.js';
import { renameKeepersStatements } from './keeper-rows.js';
import type { LedgerContext } from './ledger-context.js';
import { eventOf } from './runs-and-events.js';

/** A saved file that takes a new name with its item (paths absolute, as above the ledger). */
export interface FileMove {
  attemptId: number;
  idx: number;
  from: string;
  to: string;
}

/** What the `renamed` event says of the files that moved, in stored form. */
function movedFiles(
  paths: BatchPaths,
  moves: readonly FileMove[],
): Array<{ attempt_id: number; idx: number; from: string; to: string }> {
  return moves.map((move) => ({
    attempt_id: move.attemptId,
    idx: move.idx,
    from: paths.stored(move.from),
    to: paths.stored(move.to),
  }));
}

/**
 * An item renamed in the manifest with its request unchanged (runner/renames.ts): its row, its
 * attempts and its files' paths follow the new id in one step, so the ledger never holds half a
 * rename. The events stay where they were written (the log is append-only): a `renamed` event
 * under each id says where the item went and came from, with the files that moved. The attempts'
 * request bodies keep the old id in `mediabatch.item`: they are the exact text that was sent, and
 * an unanswered one is resent byte for byte.
 */
export async function renameItem(
  c: LedgerContext,
  from: string,
  to: string,
  moves: readonly FileMove[],
): Promise<void> {
  const files = movedFiles(c.paths, moves);
  await c.db.transaction(async (tx) => {
    const [items, attempts, renamed] = await tx.run([
      c.q
        .selectFrom('items')
        .select('item_id')
        .where('batch_id', '=', c.batchId)
        .where('item_id', '=', to)
        .compile(),
      c.q
        .selectFrom('attempts')
        .select('item_id')
        .where('batch_id', '=', c.batchId)
        .where('item_id', '=', to)
        .limit(1)
        .compile(),
      // Only where the new id is free: a taken one changes nothing, and the step stops below.
      c.q
        .updateTable('items')
        .set({ item_id: to, updated_at: c.at() })
        .where('batch_id', '=', c.batchId)
        .where('item_id', '=', from)
        .where((eb) =>
          eb.not(
            eb.or([
              eb.exists(
                eb
                  .selectFrom('items as i')
                  .select('i.item_id')
                  .where('i.batch_id', '=', c.batchId)
                  .where('i.item_id', '=', to),
              ),
              eb.exists(
                eb
                  .selectFrom('attempts as t')
                  .select('t.id')
                  .where('t.batch_id', '=', c.batchId)
                  .where('t.item_id', '=', to),
              ),
            ]),
          ),
        )
        .compile(),
    ]);
    if (items!.rows.length > 0 || attempts!.rows.length > 0)
      throw new Error(`cannot rename ${from} to ${to}: the ledger already knows ${to}`);
    if (renamed!.changes !== 1) throw new Error(`cannot rename ${from}: the ledger has no such item`);
    await tx.run(
      [
        c.q
          .updateTable('attempts')
          .set({ item_id: to })
          .where('batch_id', '=', c.batchId)
          .where('item_id', '=', from)
          .compile(),
        ...renameKeepersStatements(c, from, to),
        ...files.map((file) =>
          c.q
            .updateTable('files')
            .set({ path: file.to })
            .where('attempt_id', '=', file.attempt_id)
            .where('idx', '=', file.idx)
            .compile(),
        ),
        eventOf(c, to, null, 'renamed', { from, to, files }),
        eventOf(c, from, null, 'renamed', { from, to }),
      ],
      true,
    );
  });
}
