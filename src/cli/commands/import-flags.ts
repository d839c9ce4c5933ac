/**
 * `import`'s flags: the batch whose ledger it rebuilds, how far back, and where moved files are.
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const IMPORT_FLAGS = [
  shared.baseUrl,
  shared.ledger,
  shared.sandboxStarted,
  shared.sandboxConfig,
  shared.json,
  {
    name: 'since',
    kind: 'duration',
    value: 'DURATION',
    default: '48h, how long the service keeps outputs',
    description: 'How far back to look for jobs: minutes, hours or days, as in 90m, 6h or 2d.',
  },
  {
    name: 'files-from',
    multiple: true,
    value: 'DIR',
    default: 'the output folder only',
    description:
      'Also look in DIR (and its subfolders) for outputs moved out of the output folder: a file whose sidecar names a job being imported and whose bytes match the SHA-256 it records is copied back under its name in the output folder, never over another file, and recorded as saved. Give it again for more folders (see docs/import.md).',
  },
  shared.help,
] as const satisfies readonly FlagRow[];
