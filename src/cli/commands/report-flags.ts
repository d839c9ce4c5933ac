/**
 * `report`'s flags: the batch it reads, and the gallery page it writes (--html).
 * `shared-flags.ts` declares the flags several commands take; `flags.ts` assembles the tables.
 */
import type { FlagRow } from '../flag-row.js';
import * as shared from '../shared-flags.js';

export const REPORT_FLAGS = [
  shared.ledger,
  shared.batch,
  shared.outputDir,
  shared.sandboxRead,
  {
    name: 'html',
    value: 'FILE',
    optionalValue: true,
    default: '<output dir>/index.html when FILE is left out',
    description:
      'Write the gallery, a self-contained HTML page with the videos, to FILE instead of printing text (see docs/gallery.md). For an s3:// output location, FILE may be s3://BUCKET/KEY.html below it, to review from the bucket.',
  },
  {
    name: 'url-lifetime',
    kind: 'lifetime',
    value: 'DURATION',
    default: '7d, the longest a presigned URL can live',
    description:
      'With --html and an s3:// output location: how long the presigned links to the videos (and to a page written to the bucket) work, from 1m to 7d, as in 90m, 12h or 2d. The page says when they expire.',
  },
  {
    name: 'force',
    description:
      'With --html: replace FILE even when it is not a gallery mediabatch wrote. The manifest, the files it reads, any ledger and what is beside it, and anything in an output folder are refused all the same (see docs/results.md, "The door for named files").',
  },
  shared.help,
] as const satisfies readonly FlagRow[];
