import { z } from 'zod';
import { batchOf, checkedManifest, checkOptions, serviceOptionsSchema } from '../../batch/resolve/options.js';
import type { Manifest } from '../../manifest/index.js';
import { type CheckFunction, ownChecksOf } from '../../runner/own-checks.js';
import { type ChecksDocument, checkBatchTakes, type TakeChecked } from './check-takes.js';

const checkOptionsSchema = serviceOptionsSchema.extend({
  /** A check of your own as a function, after the manifest's `checks:` (as `run`'s `check`). */
  check: z.custom<CheckFunction>((value) => typeof value === 'function').optional(),
});

export type CheckOptions = z.input<typeof checkOptionsSchema>;
export type { ChecksDocument, TakeChecked };

/**
 * Checks every item's saved take again (`mediabatch check`, docs/checks.md): after a check of your
 * own was added or changed, or a file was replaced by hand. Sends nothing and buys nothing; records
 * each take's new check and moves items between done and checks_failed. The next `run` re-rolls the
 * failed ones that have re-rolls left. A check that cannot run ends the call with `stopped` set.
 */
export async function checkTakes(manifest: Manifest, options: CheckOptions = {}): Promise<ChecksDocument> {
  const { check, ...rest } = checkOptions('checkTakes', checkOptionsSchema, options);
  const batch = batchOf(checkedManifest('checkTakes', manifest), rest);
  return checkBatchTakes(batch, ownChecksOf(batch.manifest, batch.settings.hookEnv, check));
}
