import { resolve } from 'node:path';
import { z } from 'zod';
import { checkOptions } from '../../batch/options.js';
import type { Manifest } from '../../manifest/index.js';
import type { ApprovedPlan } from './approved-plan.js';
import { writeApprovedPlan } from './approved-plan-check.js';
import { type PlanDocument, planOf, planOptionsSchema } from './plan.js';

export type { ApprovedItem, ApprovedPlan } from './approved-plan.js';

const writePlanOptionsSchema = planOptionsSchema.extend({
  /** The approved plan's file, from `cwd` (`plan --out`): plain JSON, written whole. */
  to: z.string().min(1),
});

export type WritePlanOptions = z.input<typeof writePlanOptionsSchema>;

/** What `writePlan` made: the plan as `plan` shows it, and the approved plan written to `path`. */
export interface WrittenPlan {
  document: PlanDocument;
  approved: ApprovedPlan;
  path: string;
}

/**
 * `plan --out`: the plan, with plan's checks, and its approved form written to `to` for a person to
 * sign off (`plan_sha256`); `run` with the `plan` option then runs only that plan (docs/audit.md).
 * A plan without an upper bound (an item without max_cost_usd, no budget_usd) is refused.
 */
export async function writePlan(manifest: Manifest, options: WritePlanOptions): Promise<WrittenPlan> {
  const { to, ...checked } = checkOptions('writePlan', writePlanOptionsSchema, options);
  const { batch, document } = await planOf('writePlan', manifest, checked);
  const path = resolve(batch.cwd, to);
  const approved = await writeApprovedPlan(batch, path, {
    retryFailed: checked.retryFailed ?? false,
    regenerateExpired: checked.regenerateExpired ?? false,
  });
  return { document, approved, path };
}
