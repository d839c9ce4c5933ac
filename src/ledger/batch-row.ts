import { resolve } from 'node:path';
import type { LedgerDatabase } from './dialect/database.js';

/**
 * The batch's row, found by its manifest's name: every runner of a shared batch, on any machine,
 * opens the same row, whatever folder its copy of the project is in. Opened for writing, the row
 * is added if missing and brought up to where the manifest is now: the files' relative paths are
 * read against that folder from here on (batch-paths.ts). A read-only look at a batch never
 * added, or at a database never set up, reads as batch -1: no rows.
 */
export async function findBatch(
  db: LedgerDatabase,
  batchName: string,
  manifestPath: string,
  at: string,
  readonly: boolean,
  hasBatches: boolean,
): Promise<{ id: number; manifestPath: string }> {
  const current = resolve(manifestPath);
  const select = db.q
    .selectFrom('batches')
    .select(['id', 'manifest_path as manifestPath'])
    .where('name', '=', batchName)
    .compile();
  if (readonly) {
    if (!hasBatches) return { id: -1, manifestPath: current };
    const [found] = await db.read(select);
    return found ?? { id: -1, manifestPath: current };
  }
  const results = await db.batch([
    db.q
      .insertInto('batches')
      .values({ name: batchName, manifest_path: current, created_at: at })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .compile(),
    db.q
      .updateTable('batches')
      .set({ manifest_path: current })
      .where('name', '=', batchName)
      .where('manifest_path', '<>', current)
      .compile(),
    select,
  ]);
  const [row] = results[2]!.rows as Array<{ id: number; manifestPath: string }>;
  return { id: Number(row!.id), manifestPath: row!.manifestPath };
}
