/**
 * `export`'s flags: what it writes (the records, --kept, --rejected), in what form, and where.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const EXPORT_FLAGS = [
  shared.ledger,
  shared.batch,
  shared.outputDir,
  shared.sandboxRead,
  {
    name: 'format',
    value: 'FORMAT',
    choices: ['jsonl', 'csv'],
    default: 'jsonl',
    description:
      'jsonl: one JSON object per line. csv: a header row, then one row per item; vars, input and files are JSON text in their cell.',
  },
  {
    name: 'state',
    multiple: true,
    value: 'STATE',
    choices: [
      'pending',
      'in_flight',
      'done',
      'failed',
      'checks_failed',
      'budget_exceeded',
      'expired',
      'removed',
    ],
    default: 'every item',
    description:
      'Only items in this state; give it again for more states (--state done --state failed). removed: the paid items the manifest no longer names, whatever their state; the other states select manifest items only.',
  },
  {
    name: 'kept',
    description:
      'One record per manifest item instead: its kept take (mediabatch keep; an item with one variant and one take keeps it), with files, SHA-256, variant, take and cost. Items without one are counted on stderr. A keeper the manifest no longer asks for (variants lowered, item removed) is written with in_manifest false. Each kept file is read and compared with its SHA-256: one missing or altered is named on stderr and the exit code is 1.',
  },
  {
    name: 'rejected',
    description:
      'The requests the service\'s moderation rejected (content_rejected) instead, which no item sends again: each item, the prompt it sent and the service\'s message, as YAML to edit and paste back into the manifest as prompts or fallback_prompts (see docs/manifest.md, "Fallback prompts"). --format and --state do not apply.',
  },
  {
    name: 'out',
    value: 'FILE',
    default: 'stdout',
    description:
      'Write to FILE instead: a temporary file beside it, renamed over it once complete. FILE is new or an export mediabatch wrote (else see --force); never the manifest, a ledger or anything in an output folder (see docs/results.md, "The door for named files").',
  },
  {
    name: 'force',
    description:
      'With --out: replace FILE even when it is not an export mediabatch wrote (one it wrote is replaced without --force). The manifest, the files it reads, any ledger and what is beside it, and anything in an output folder are refused all the same (see docs/results.md, "The door for named files").',
  },
  shared.help,
] as const satisfies readonly FlagRow[];
