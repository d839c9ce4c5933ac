/**
 * `check`'s flags: the batch whose saved takes it checks again.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const CHECK_FLAGS = [
  shared.ledger,
  shared.sandbox(
    'Check the takes `run --sandbox` saved, in its ledger and output folder; no sandbox is started.',
  ),
  shared.json,
  shared.help,
] as const satisfies readonly FlagRow[];
