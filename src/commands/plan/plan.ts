import { z } from 'zod';
import type { PlanItem, PlanDocument as PlanReport } from '../../batch/plan/plan-report.js';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  serviceOptionsSchema,
  verifySchema,
  warnSchema,
} from '../../batch/resolve/options.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import {
  isStreamed,
  NotStreamable,
  type StreamedManifest,
  wholeManifest,
} from '../../batch/resolve/streamed-manifest.js';
import { ignoreWarnings } from '../../batch/resolve/warnings.js';
import { itemsHeld, SpooledItems } from '../../documents/spooled-items.js';
import type { Manifest } from '../../manifest/index.js';
import { planBatch, planStreamedBatch } from './plan-batch.js';

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

/**
 * What `run` would do now, with the checks `mediabatch plan` makes (`plan --json`), its items in an
 * array: for a batch small enough to hold (streamPlan gives a large one's items a few at a time).
 */
export async function plan(
  manifest: Manifest | StreamedManifest,
  options: PlanOptions = {},
): Promise<PlanDocument> {
  return itemsHeld(await streamPlan(manifest, options, 'plan'));
}

/** A plan whose items are read back each time they are iterated (`close` them once done). */
export type StreamedPlanDocument = PlanReport<SpooledItems<PlanItem>> & { ledger: PlanDocument['ledger'] };

/**
 * The plan of `plan`, its items made a chunk at a time from a manifest too large to hold
 * (openManifest) and kept in a temporary file until read (docs/api.md, "Batches too large to
 * hold"): the whole document in bounded memory, its totals known before its items are read. A
 * manifest held whole, or one whose plan needs every item at once (a shared batch's definition),
 * is planned whole and its items held. `items.close()` removes the file.
 */
export async function streamPlan(
  manifest: Manifest | StreamedManifest,
  options: PlanOptions = {},
  call = 'streamPlan',
): Promise<StreamedPlanDocument> {
  const { warn, verify, regenerateExpired, retryFailed, redefine, ...rest } = checkOptions(
    call,
    planOptionsSchema,
    options,
  );
  const asked = { verify, regenerateExpired, retryFailed, redefine };
  if (isStreamed(manifest)) {
    try {
      const planned = await planStreamedBatch(batchOf(manifest, rest), warn ?? ignoreWarnings, asked);
      return { ...planned.doc, ledger: planned.ledger };
    } catch (error) {
      if (!(error instanceof NotStreamable)) throw error;
    }
  }
  const batch = batchOf(checkedManifest(call, wholeManifest(manifest)), rest);
  const planned = await planBatch(batch, warn ?? ignoreWarnings, asked);
  return { ...planned.doc, items: SpooledItems.of(planned.doc.items), ledger: planned.ledger };
}
