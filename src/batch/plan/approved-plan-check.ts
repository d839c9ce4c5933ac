import { readFileSync } from 'node:fs';
import { writeFileAtomically } from '../../downloads/write-atomically.js';
import { UserError } from '../../errors.js';
import {
  type ReadingLedger,
  type RecordReads,
  SANDBOX_IDENTITY,
  type TakeLedger,
} from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import { type Micros, parseUsd } from '../../money.js';
import { withLedger } from '../ledger/ledger-read.js';
import { filesUnder } from '../output/output-files.js';
import type { Batch } from '../resolve/resolve-batch.js';
import type { RunSettings } from '../run-settings/run-settings.js';
import { serviceIdentity } from '../service/service-identity.js';
import {
  APPROVED_PLAN_FORMAT,
  type ApprovedPlan,
  approvedPlanOf,
  type PlanChoices,
  planDifferences,
  planHash,
} from './approved-plan.js';
import { planSource } from './plan-reads.js';
import { buildPlanStreamed } from './plan-streamed.js';

/**
 * Approved plans (docs/audit.md, "Approved plans"): `plan` writes one (`writePlan`), a person
 * signs off its `plan_sha256`, and `run` with it (`plan` option) runs only that plan: refused
 * before any request when the manifest, the items, the prices the ledger knows or the ledger
 * itself no longer match, and never spending more than its total, whatever the budget says.
 */

/** `plan` for this run: the ledger's prices and what it would submit with the run's own choices. */
export async function planOfRun(
  manifest: Manifest,
  ledger: RecordReads & ReadingLedger & TakeLedger,
  settings: RunSettings,
) {
  const outputFiles = filesUnder(manifest.outputDir, manifest.file);
  const { runner } = settings;
  return buildPlanStreamed(manifest, await planSource(ledger), null, Date.now(), {
    regenerateExpired: runner.regenerateExpired,
    outputFiles,
    retryFailed: runner.retryFailed ?? false,
    redo: runner.redo ?? [],
    only: runner.only ?? null,
  });
}

/** The plan as `run` would make it now, by the rule run's own summary uses (read only). */
export function currentApprovedPlan(batch: Batch, asked: PlanChoices): Promise<ApprovedPlan | null> {
  const { manifest } = batch;
  const outputFiles = filesUnder(manifest.outputDir, manifest.file);
  return withLedger(batch, async (ledger) => {
    const source = await planSource(ledger);
    const money = source.money;
    const doc = await buildPlanStreamed(manifest, source, null, Date.now(), {
      retryFailed: asked.retryFailed ?? false,
      regenerateExpired: asked.regenerateExpired,
      outputFiles,
    });
    return approvedPlanOf(manifest, doc, { money, service: plannedService(batch) }, asked);
  });
}

/** The service a plan is made for: the sandbox, the base URL named, or null when none is. */
function plannedService(batch: Pick<Batch, 'sandbox' | 'baseUrl'>): string | null {
  if (batch.sandbox) return SANDBOX_IDENTITY;
  return batch.baseUrl && URL.canParse(batch.baseUrl) ? serviceIdentity(batch.baseUrl) : null;
}

/** Writes the approved plan to `path` (plain JSON, whole or not at all) and returns it. */
export async function writeApprovedPlan(
  batch: Batch,
  path: string,
  asked: PlanChoices,
): Promise<ApprovedPlan> {
  const plan = await currentApprovedPlan(batch, asked);
  if (plan === null)
    throw new UserError(
      'the plan has no upper bound (an item to submit without max_cost_usd, and no budget_usd), so there is no total to approve; ' +
        'set either, then write the plan again. Nothing was written',
      'invalid_usage',
      { option: 'out' },
    );
  await writeFileAtomically(path, `${JSON.stringify(plan, null, 2)}\n`);
  return plan;
}

/** An approved plan read back: refused (`plan_invalid`) when it is not one, or was altered since written. */
export function readApprovedPlan(path: string): ApprovedPlan {
  let plan: ApprovedPlan;
  try {
    plan = JSON.parse(readFileSync(path, 'utf8')) as ApprovedPlan;
  } catch (error) {
    throw invalidPlan(path, `it cannot be read as JSON (${(error as Error).message})`);
  }
  if (plan?.format !== APPROVED_PLAN_FORMAT)
    throw invalidPlan(path, `its format is not ${APPROVED_PLAN_FORMAT}`);
  if (plan.plan_sha256 !== planHash(plan))
    throw invalidPlan(
      path,
      'its plan_sha256 is not the hash of its content: it was changed after it was written',
    );
  return plan;
}

function invalidPlan(path: string, why: string): UserError {
  return new UserError(`\`plan\` ${path} is not an approved plan: ${why}; nothing was sent`, 'plan_invalid', {
    option: 'plan',
    path,
  });
}

/**
 * Before any request: the approved plan at `path` is the plan as it stands now, or the run is
 * refused (exit 2, `plan_differs`) with what changed. Returns the spend ceiling the run keeps:
 * what the ledger had spent and reserved when the plan was made, plus the plan's total.
 */
export async function approvedCeiling(batch: Batch, path: string, asked: PlanChoices): Promise<Micros> {
  const approved = readApprovedPlan(path);
  const now = await currentApprovedPlan(batch, asked);
  const differences =
    now === null
      ? ['the plan has no upper bound now (an item to submit without max_cost_usd, and no budget_usd)']
      : planDifferences(approved, now);
  if (differences.length > 0)
    throw new UserError(
      `the approved plan ${path} (plan_sha256 ${approved.plan_sha256.slice(0, 12)}) is not what run would do now: ` +
        `${differences.join('; ')}. Nothing was sent; write a new plan and have it approved`,
      'plan_differs',
      { option: 'plan', path, plan_sha256: approved.plan_sha256, differences },
    );
  const micros = (usd: string) => parseUsd(usd) ?? 0;
  return (
    micros(approved.ledger.spent_usd) +
    micros(approved.ledger.reserved_usd) +
    micros(approved.total_at_most_usd)
  );
}

/** The manifest the runner spends by: its budget no higher than the approved ceiling. */
export function withinCeiling(manifest: Manifest, ceilingMicros: Micros | null): Manifest {
  if (ceilingMicros === null) return manifest;
  const budget =
    manifest.budgetMicros === null ? ceilingMicros : Math.min(manifest.budgetMicros, ceilingMicros);
  return { ...manifest, budgetMicros: budget };
}
