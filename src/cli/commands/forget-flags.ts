/**
 * `forget`'s flags: the batch whose lost jobs it gives up.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const FORGET_FLAGS = [
  shared.baseUrl,
  shared.ledger,
  shared.sandboxStarted,
  shared.sandboxConfig,
  shared.help,
] as const satisfies readonly FlagRow[];
