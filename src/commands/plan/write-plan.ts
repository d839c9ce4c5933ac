import { resolve } from 'node:path';
import { z } from 'zod';
import {
  refuseNamedTarget,
  savedFilesOf,
  type TargetKind,
  targetGuard,
} from '../../batch/named-files/named-target.js';
import { APPROVED_PLAN_FORMAT, type ApprovedPlan } from '../../batch/plan/approved-plan.js';
import { writeApprovedPlan } from '../../batch/plan/approved-plan-check.js';
import { checkOptions } from '../../batch/resolve/options.js';
import type { Manifest } from '../../manifest/index.js';
import { type PlanDocument, planOf, planOptionsSchema } from './plan.js';

export type { ApprovedItem, ApprovedPlan } from '../../batch/plan/approved-plan.js';

const writePlanOptionsSchema = planOptionsSchema.extend({
  /** The approved plan's file, from `cwd` (`plan --out`): plain JSON, written whole. */
  to: z.string().min(1),
  /** Replace an existing file that is not an approved plan (never a protected one: docs/results.md). */
  force: z.boolean().optional(),
});

/**
 * The approved plan as the door for named files knows it: its own kind is a file that begins as
 * writeApprovedPlan writes one, `{` and its `format` first.
 */
const APPROVED_PLAN_FILE: TargetKind = {
  call: 'writePlan',
  option: 'to',
  writes: 'the approved plan',
  notOwn: 'is not an approved plan mediabatch wrote',
  isOwn: (head) => head.toString('utf8').startsWith(`{\n  "format": "${APPROVED_PLAN_FORMAT}"`),
  forceable: true,
};

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
 * A plan without an upper bound (an item without max_cost_usd, no budget_usd) is refused, and so
 * is a `to` the door for named files refuses (batch/named-files/named-target.ts), before the plan is made.
 */
export async function writePlan(manifest: Manifest, options: WritePlanOptions): Promise<WrittenPlan> {
  const { to, force, ...checked } = checkOptions('writePlan', writePlanOptionsSchema, options);
  let path = '';
  const { batch, document } = await planOf('writePlan', manifest, checked, async (batch) => {
    path = resolve(batch.cwd, to);
    await refuseNamedTarget(path, targetGuard(batch), APPROVED_PLAN_FILE, {
      force: force ?? false,
      saved: savedFilesOf(batch),
    });
  });
  const approved = await writeApprovedPlan(batch, path, {
    retryFailed: checked.retryFailed ?? false,
    regenerateExpired: checked.regenerateExpired ?? false,
  });
  return { document, approved, path };
}
