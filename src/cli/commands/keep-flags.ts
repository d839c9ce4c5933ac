/**
 * `keep`'s flags: the batch whose keepers it records.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const KEEP_FLAGS = [
  shared.baseUrl,
  shared.ledger,
  shared.batch,
  shared.outputDir,
  shared.sandbox('Keep takes of `run --sandbox`, in its ledger and output folder; no sandbox is started.'),
  shared.help,
] as const satisfies readonly FlagRow[];
