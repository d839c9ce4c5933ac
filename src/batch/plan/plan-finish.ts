import type { FileProblemCounts, FileProblems } from '../../documents/file-problems.js';
import { shownFrom } from '../../documents/shown-path.js';
import { expiryWarnings, type FileCheckMode } from '../../documents/status-report.js';
import { valueAtRisk } from '../../documents/value-at-risk.js';
import { savedBeforeCommitOf } from '../../downloads/files-on-disk.js';
import type { ManifestProblem } from '../../errors.js';
import { type AttemptRecord, budgetLeftMicros, type MoneyTotals, spentMicros } from '../../ledger/index.js';
import { formatProblem, type ManifestHead } from '../../manifest/index.js';
import { foreignFiles } from '../../manifest/taken-names.js';
import { formatUsd, formatUsdHuman, type Micros } from '../../money.js';
import { notFittingLine } from '../../runner/budget-words.js';
import { variantsOrderNote } from '../plan-decisions/plan-budget.js';
import { type RemovedItem, strayReasons } from '../plan-decisions/plan-changes.js';
import { copiesWarning, type PlanCopies } from '../plan-decisions/plan-copies.js';
import type { RenamedItem } from '../plan-decisions/plan-renames.js';
import { mostItCanCost, type Walk } from '../plan-decisions/plan-walk.js';
import { type AccountCheck, accountWarnings, toPlanAccount } from './plan-account.js';
import type { PlanDocument, PlanTotals } from './plan-document.js';
import { planSummary } from './plan-summary.js';

/**
 * What a plan says besides its items' lines, from what its walk through them found: the plan held
 * whole (plan-report.ts) and the plan of a streamed manifest (plan-stream.ts) finish alike.
 */

/** The manifest as a plan reads it besides its items. */
export type PlanManifest = ManifestHead & { warnings: readonly ManifestProblem[] };

/** What plan says of an item whose job's files a stopped run saved but did not commit. */
export const SAVED_BEFORE_COMMIT_WORDS =
  'its file was saved before the last run was stopped, with a sidecar naming its job: run records it, nothing to fetch or pay';

/**
 * The output folder's files the ledger did not write (null: the folder was not looked at), and the
 * items whose files a run stopped before it committed them saved there: those are its output.
 */
export function strangers(
  manifest: Pick<ManifestHead, 'name'>,
  unsaved: readonly AttemptRecord[],
  outputFiles: readonly string[] | null | undefined,
  itemFilePaths: () => Iterable<readonly [string, string]>,
): { foreign: string[] | null; savedEarly: ReadonlySet<string> } {
  // An empty output folder has no stray files, whatever the ledger holds: skip reading its paths.
  const unowned = outputFiles
    ? foreignFiles(outputFiles, outputFiles.length > 0 ? itemFilePaths() : [])
    : null;
  // A job's files saved by a run stopped before it committed them are its output, not strangers.
  const jobs = new Map(
    unsaved.flatMap((attempt) => (attempt.jobId ? [[attempt.jobId, attempt.itemId] as const] : [])),
  );
  const savedEarly = savedBeforeCommitOf(unowned ?? [], manifest.name, jobs);
  const foreign = unowned === null ? null : unowned.filter((path) => !savedEarly.paths.has(path));
  return { foreign, savedEarly: savedEarly.items };
}

/** What the walk through the items found, besides their lines. */
export interface PlanFound {
  walk: Omit<Walk, 'items'>;
  /** How many items there are. */
  items: number;
  copies: PlanCopies;
  /** The items' file problems, counted. */
  problems: FileProblemCounts;
  /** Whether an item asks for more than one variant (the budget buys a variant at a time). */
  variants: boolean;
  /** What plan says of each item a file the ledger did not write holds back (plan-held-back.ts). */
  heldBack: readonly string[];
}

/** What the plan read besides the manifest and its items. */
export interface PlanRead {
  money: MoneyTotals;
  unsaved: readonly AttemptRecord[];
  /** Absent: saved files were not looked at. */
  fileProblems?: FileProblems | undefined;
}

/** The plan document but its items, in its order: `manifest` and `summary` go before the items. */
export function finishPlan(
  manifest: PlanManifest,
  read: PlanRead,
  account: AccountCheck | null,
  nowMs: number,
  inputs: { strayWhy?: (path: string) => string | null; fileCheck?: FileCheckMode },
  found: PlanFound,
  lists: { renamed: RenamedItem[]; removed: RemovedItem[]; foreign: string[] | null },
): Omit<PlanDocument, 'items'> {
  const { walk } = found;
  const { foreign } = lists;
  const shown = shownFrom(manifest.file);
  const budgetLeft = budgetLeftMicros(manifest.budgetMicros, read.money);
  const stray = foreign === null ? null : foreign.map(shown).sort();
  const estimateTotal = walk.unknown > 0 ? null : walk.estimateTotal;
  const atMost = mostItCanCost(walk.capsTotal, walk.uncapped, budgetLeft);
  const warnings = planWarnings(manifest, read.unsaved, nowMs, walk, found.variants);
  const copied = copiesWarning(found.copies, found.items);
  if (copied !== null) warnings.push(copied);
  const again = paysAgainLine(walk, budgetLeft);
  if (again) warnings.push(again);
  warnings.push(...found.heldBack);
  if (account?.ok)
    warnings.push(...accountWarnings(account.account, estimateTotal, walk.toSubmit, manifest.concurrency));
  const totals = planTotals(manifest, found, read.money, {
    removed: lists.removed.length,
    strayFiles: stray?.length ?? 0,
    budgetLeft,
    estimateTotal,
    atMost,
  });
  return {
    manifest: manifest.name,
    summary: planSummary(totals),
    renamed: lists.renamed,
    removed: lists.removed,
    stray_files: stray,
    ...(foreign?.length && inputs.strayWhy
      ? { stray_reasons: strayReasons(foreign, shown, inputs.strayWhy) }
      : {}),
    totals,
    file_check: read.fileProblems ? (inputs.fileCheck ?? 'stat') : null,
    value_at_risk: valueAtRisk(read.unsaved, nowMs),
    account: account === null ? null : toPlanAccount(account),
    pays_again: again,
    warnings,
  };
}

/** A plan document, its items put back in their place after `manifest` and `summary`. */
export function withItems<I>(
  rest: Omit<PlanDocument, 'items'>,
  items: I,
): Omit<PlanDocument, 'items'> & { items: I } {
  const { manifest, summary, ...after } = rest;
  return { manifest, summary, items, ...after };
}

/** `2 items whose paid jobs the service lost are paid for again: expected $0.80, at most $2.00.` */
function paysAgainLine(walk: PlanFound['walk'], budgetLeft: Micros | null): string | null {
  const { again } = walk;
  if (again.items === 0) return null;
  const expected = again.unknown > 0 ? 'expected cost unknown' : `expected ${formatUsdHuman(again.estimate)}`;
  const most = mostItCanCost(again.caps, again.uncapped, budgetLeft);
  const bound =
    most === null ? 'no upper bound (no max_cost_usd, no budget_usd)' : `at most ${formatUsdHuman(most)}`;
  const items = again.items === 1 ? '1 item whose paid job' : `${again.items} items whose paid jobs`;
  return `${items} the service lost (mediabatch forget) ${again.items === 1 ? 'is' : 'are'} paid for again: ${expected}, ${bound}`;
}

/** The manifest's own warnings, then what the plan found: expiring files, unknown prices, budget. */
function planWarnings(
  manifest: PlanManifest,
  unsaved: readonly AttemptRecord[],
  nowMs: number,
  walk: PlanFound['walk'],
  variants: boolean,
): string[] {
  const warnings = manifest.warnings.map(formatProblem);
  warnings.push(...expiryWarnings(unsaved, nowMs));
  const { unknown } = walk;
  if (unknown > 0) {
    warnings.push(
      `${unknown} item${unknown === 1 ? '' : 's'} to submit ${unknown === 1 ? 'has' : 'have'} no price seen in the ledger and no max_cost_usd: the cost estimate is unknown`,
    );
  }
  const blocked = walk.counts.blocked_by_budget;
  if (blocked > 0 && walk.firstBlocked !== null) {
    // The words a run records for the item, after the count: the run counts by the same rule.
    warnings.push(notFittingLine(blocked, 'will not fit', walk.firstBlocked.id, walk.firstBlocked.words));
  }
  const order = variantsOrderNote(variants, { blocked, mayFit: walk.mayFit });
  if (order !== null) warnings.push(order);
  return warnings;
}

function planTotals(
  manifest: PlanManifest,
  found: PlanFound,
  money: MoneyTotals,
  sums: {
    removed: number;
    strayFiles: number;
    budgetLeft: Micros | null;
    estimateTotal: Micros | null;
    atMost: Micros | null;
  },
): PlanTotals {
  const { walk } = found;
  const { budgetLeft, estimateTotal, atMost } = sums;
  return {
    items: found.items,
    ...walk.counts,
    to_submit: walk.toSubmit,
    budget_permitting: walk.mayFit,
    removed: sums.removed,
    stray_files: sums.strayFiles,
    spent_usd: formatUsd(spentMicros(money)),
    refunded_usd: formatUsd(money.refundedMicros),
    reserved_usd: formatUsd(money.reservedMicros),
    budget_usd: manifest.budgetMicros === null ? null : formatUsd(manifest.budgetMicros),
    budget_left_usd: budgetLeft === null ? null : formatUsd(budgetLeft),
    estimate_usd: estimateTotal === null ? null : formatUsd(estimateTotal),
    expected_usd: walk.expected.items === 0 ? null : formatUsd(walk.expected.micros),
    expected_items: walk.expected.items,
    expected_samples: walk.expected.samples,
    at_most_usd: atMost === null ? null : formatUsd(atMost),
    copies: found.copies.copies,
    copied_requests: found.copies.requests,
    ...found.problems,
  };
}
