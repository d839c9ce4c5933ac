import { z } from 'zod';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  serviceOptionsSchema,
  tellOf,
  tellSchema,
} from '../../batch/resolve/options.js';
import type { Manifest } from '../../manifest/index.js';
import { importLedger } from './import-ledger.js';
import type { ImportSummary } from './render-import.js';

const importOptionsSchema = serviceOptionsSchema.extend({
  /** How far back to look, in hours (`--since`); default 48, how long outputs live. */
  sinceHours: z.number().positive().optional(),
  /**
   * Folders the outputs may have been moved to (`--files-from`), from `cwd`: an output found there
   * by its sidecar is copied back into the output folder (docs/import.md). A folder of outputs only.
   */
  filesFrom: z.array(z.string().min(1)).optional(),
  ...tellSchema,
});

export type ImportOptions = z.input<typeof importOptionsSchema>;

/** Rebuilds a lost ledger from the service's job list, with the checks `mediabatch import` makes. */
export async function importJobs(manifest: Manifest, options: ImportOptions = {}): Promise<ImportSummary> {
  const { sinceHours, filesFrom, warn, log, ...rest } = checkOptions(
    'importJobs',
    importOptionsSchema,
    options,
  );
  const batch = batchOf(checkedManifest('importJobs', manifest), rest);
  return importLedger(
    batch,
    { sinceMs: sinceHours === undefined ? null : sinceHours * 3_600_000, filesFrom: filesFrom ?? [] },
    tellOf(warn, log),
  );
}
