/**
 * `plan`'s flags: run's flags that change what it pays for, previewed, and the approved plan it
 * writes (--out).
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const PLAN_FLAGS = [
  shared.baseUrl,
  shared.ledger,
  shared.batch,
  shared.outputDir,
  shared.sandboxRead,
  shared.json,
  shared.regenerateExpired,
  shared.redefine,
  shared.summary,
  shared.full,
  shared.verify,
  shared.retryFailed,
  {
    name: 'out',
    value: 'FILE',
    description:
      "Also write the plan as an approved plan to FILE: plain JSON with every item's request hash and expected price, the total at most, the manifest's hash, the ledger's money it was made against, and a plan_sha256 a reviewer quotes. Run it with run --plan FILE (see docs/audit.md). A plan without an upper bound (an item without max_cost_usd, and no budget_usd) is refused. FILE is new or an approved plan mediabatch wrote (else see --force); never the manifest, a ledger or anything in an output folder (see docs/results.md, \"The door for named files\").",
  },
  {
    name: 'force',
    description:
      'With --out: replace FILE even when it is not an approved plan mediabatch wrote (one it wrote is replaced without --force). The manifest, the files it reads, any ledger and what is beside it, and anything in an output folder are refused all the same (see docs/results.md, "The door for named files").',
  },
  shared.help,
] as const satisfies readonly FlagRow[];
