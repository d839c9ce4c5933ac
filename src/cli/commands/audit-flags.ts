/**
 * `audit`'s flags: the batch it audits, and the dispute bundle it writes (--out).
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const AUDIT_FLAGS = [
  shared.baseUrl,
  shared.ledger,
  shared.batch,
  shared.outputDir,
  shared.sandboxStarted,
  shared.sandboxConfig,
  shared.json,
  {
    name: 'out',
    value: 'DIR',
    description:
      "Also write a dispute bundle into DIR, a new or empty folder (an earlier bundle only with --force; never an output folder or anything in one): problems.csv (job ids, idempotency keys, request ids, times, amounts, status, error code), audit.json, and for each job of a problem its JSON as the service returned it, the ledger's record of it and its sidecars. The API key is in none of them.",
  },
  {
    name: 'force',
    description:
      'With --out: replace a dispute bundle audit wrote before in DIR, whole. A folder of other files, a file, and anything protected (see docs/results.md, "The door for named files") are refused all the same.',
  },
  shared.help,
] as const satisfies readonly FlagRow[];
