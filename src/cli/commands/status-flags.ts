/**
 * `status`'s flags: the batch it reads, and the form of its document.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const STATUS_FLAGS = [
  shared.ledger,
  shared.batch,
  shared.outputDir,
  shared.sandboxRead,
  shared.json,
  shared.summary,
  shared.full,
  shared.verify,
  shared.help,
] as const satisfies readonly FlagRow[];
