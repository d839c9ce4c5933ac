import { z } from 'zod';
import { batchOf, checkedManifest, checkOptions, serviceOptionsSchema } from '../../batch/resolve/options.js';
import { readListEntries } from '../../batch/run-settings/list-files.js';
import type { Manifest } from '../../manifest/index.js';
import { type KeepOutcome, keepTakes as keepBatchTakes } from './keep-takes.js';

const entrySchema = z.union([
  // An empty entry is refused as any other that is not ID:VARIANT[.TAKE] (keep_invalid).
  z.string(),
  z.strictObject({ entry: z.string(), file: z.string().min(1), line: z.number().int().positive() }),
]);

const keepOptionsSchema = serviceOptionsSchema.extend({
  /**
   * `ID:N` (variant N's newest saved take; 1 for an item without variants), `ID:N.T` (its take T)
   * or `ID:none` (no keeper); an entry read from a list file with its `file` and `line`, which a
   * refusal names; `@FILE` names a list file (the gallery's keep.txt), read from `cwd` entry by entry.
   */
  entries: z.array(entrySchema).min(1, 'must name at least one take to keep (ID:VARIANT[.TAKE], or @FILE)'),
});

export type KeepOptions = z.input<typeof keepOptionsSchema>;

/**
 * What `keepTakes` did: per manifest item kept, the ledger item (variant) and take kept and its
 * files (absolute paths or object URIs); the items cleared; the items asking for several variants
 * that still have no keeper; how many sidecars were written again.
 */
export type KeepResult = KeepOutcome;

/**
 * Records which take of each named manifest item is kept (`mediabatch keep`, docs/gallery.md).
 * Sends nothing and costs nothing. All entries or none: a bad one refuses the call with
 * `keep_invalid` or `keep_file_missing` (exit 2) and nothing is written; refused like the other
 * writing calls while a run holds the ledger (`ledger_held`) or when the ledger belongs to another
 * service than the one named (`ledger_other_service`).
 */
export async function keepTakes(manifest: Manifest, options: KeepOptions): Promise<KeepResult> {
  const { entries, ...rest } = checkOptions('keepTakes', keepOptionsSchema, options);
  const batch = batchOf(checkedManifest('keepTakes', manifest), rest);
  const listed = entries.flatMap((entry) =>
    typeof entry === 'string' ? readListEntries([entry], batch.cwd, 'keep') : [entry],
  );
  return keepBatchTakes(batch, listed);
}
