import { z } from 'zod';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  serviceOptionsSchema,
  verifySchema,
  warnSchema,
} from '../../batch/options.js';
import type { Batch } from '../../batch/resolve-batch.js';
import { ignoreWarnings } from '../../batch/warnings.js';
import type { Manifest } from '../../manifest/index.js';
import { planBatch } from './plan-batch.js';
import type { PlanDocument as PlanReport } from './plan-report.js';

export const planOptionsSchema = serviceOptionsSchema.extend({
  /** Told each warning (a pre-flight retry, an account not checked), as `{ code, message }`. */
  warn: warnSchema.optional(),
  verify: verifySchema,
  /** Preview `run --regenerate-expired`: expired items are priced as submitted again. */
  regenerateExpired: z.boolean().optional(),
  /** Preview `run --retry-failed`: finally failed items are priced as submitted again. */
  retryFailed: z.boolean().optional(),
  /** Preview `run --redefine`: a manifest that is not its shared batch's definition would become its next revision. */
  redefine: z.boolean().optional(),
});

export type PlanOptions = z.input<typeof planOptionsSchema>;

/** The plan document (`plan --json`), with where its ledger is. */
export type PlanDocument = PlanReport & { ledger: { path: string; exists: boolean; service: string | null } };

/**
 * The plan a call asks for (`plan`, `writePlan`) from its checked options: the batch resolved once,
 * and the document as `plan --json` shows it.
 */
export async function planOf(
  call: string,
  manifest: Manifest,
  options: z.infer<typeof planOptionsSchema>,
  /** Checks made on the batch before the plan is (writePlan's target), so a refusal costs nothing. */
  first: (batch: Batch) => Promise<void> = async () => undefined,
): Promise<{ batch: Batch; document: PlanDocument }> {
  const { warn, verify, regenerateExpired, retryFailed, redefine, ...rest } = options;
  const batch = batchOf(checkedManifest(call, manifest), rest);
  await first(batch);
  const planned = await planBatch(batch, warn ?? ignoreWarnings, {
    verify,
    regenerateExpired,
    retryFailed,
    redefine,
  });
  return { batch, document: { ...planned.doc, ledger: planned.ledger } };
}

/** What `run` would do now, with the checks `mediabatch plan` makes (`plan --json`). */
export async function plan(manifest: Manifest, options: PlanOptions = {}): Promise<PlanDocument> {
  return (await planOf('plan', manifest, checkOptions('plan', planOptionsSchema, options))).document;
}
