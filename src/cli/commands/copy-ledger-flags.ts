/**
 * `copy-ledger`'s flags: the ledger it copies from and the one it copies into.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const COPY_LEDGER_FLAGS = [
  {
    name: 'ledger',
    value: 'PATH|URL',
    default: '.mediabatch/<name>.sqlite beside the manifest',
    description: 'The ledger to copy from: a file, or a postgres:// URL. It is only read.',
  },
  {
    name: 'to',
    value: 'PATH|URL',
    required: true,
    description:
      'Required: the ledger to copy into, a file or a postgres:// URL (its password, or PGPASSWORD, is never printed). It must record nothing of the batch yet; a new file is created. A file must be new or a SQLite ledger: never the manifest, the ledger copied from, a file beside a ledger or anything in an output folder (see docs/results.md, "The door for named files").',
  },
  shared.help,
] as const satisfies readonly FlagRow[];
