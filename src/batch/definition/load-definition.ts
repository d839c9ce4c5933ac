import { z } from 'zod';
import type { Manifest } from '../../manifest/index.js';
import { checkOptions } from '../resolve/options.js';
import { definedManifest } from './defined-batch.js';

export const definitionOptionsSchema = z.strictObject({
  /** The shared ledger's `postgres://` URL; its missing parts come from the `PG*` variables of `env`. */
  ledger: z.string().min(1).optional(),
  /** The batch's name: its manifest's `name`. */
  batch: z.string().min(1),
  /**
   * Where the batch's output folder is on this machine, when its `output.dir` is a folder relative
   * to the manifest's: a path ending in that `output.dir`. Left out for an `s3://` output.
   */
  outputDir: z.string().min(1).optional(),
  /** Where a relative `outputDir` starts; default the process's working folder. */
  cwd: z.string().min(1).optional(),
  /** The environment the `PG*` variables are read from; default the process's. */
  env: z.record(z.string(), z.string().optional()).optional(),
});

export type DefinitionOptions = z.input<typeof definitionOptionsSchema>;

/**
 * A shared batch's current definition, read from its PostgreSQL ledger alone, as the manifest
 * `run`, `plan` and `status` take (give them the same `ledger`): a machine with no copy of the
 * manifest runs the batch so (docs/shared-ledger.md, "Adding a machine"). Throws `UserError`
 * `definition_missing` when the ledger holds no definition of the batch, `output_dir_unknown` when
 * its output folder needs `outputDir`.
 */
export function loadDefinition(options: DefinitionOptions): Promise<Manifest> {
  const checked = checkOptions('loadDefinition', definitionOptionsSchema, options);
  return definedManifest({
    ledger: checked.ledger,
    batch: checked.batch,
    outputDir: checked.outputDir,
    cwd: checked.cwd ?? process.cwd(),
    env: checked.env,
  });
}
