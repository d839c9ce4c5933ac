import { countProblems, type FileProblemCounts, shownProblems } from '../../documents/file-problems.js';
import type { KeeperOutsideManifest } from '../../documents/kept-records.js';
import { shownFrom } from '../../documents/shown-path.js';
import { expiryWarnings, type FileCheckMode } from '../../documents/status-report.js';
import type { LedgerView } from '../../documents/status-view.js';
import { type ValueAtRisk, valueAtRisk } from '../../documents/value-at-risk.js';
import { savedBeforeCommitOf } from '../../downloads/files-on-disk.js';
import type { ItemEntry } from '../../ledger/item-entries.js';
import { budgetLeftMicros, spentMicros } from '../../ledger/money-totals.js';
import type { ReusableTake } from '../../ledger/reused-take.js';
import type { Manifest } from '../../manifest/index.js';
import { formatProblem } from '../../manifest/index.js';
import { foreignFiles } from '../../manifest/taken-names.js';
import { formatUsd, formatUsdHuman, type Micros } from '../../money.js';
import { notFittingLine } from '../../runner/budget-words.js';
import { type AccountCheck, accountWarnings, type PlanAccount, toPlanAccount } from './plan-account.js';
import { variantsOrderNote } from './plan-budget.js';
import { type RemovedItem, removedItems, strayReasons } from './plan-changes.js';
import { copiesWarning, type PlanCopies, planCopies } from './plan-copies.js';
import { type Decided, decideAll, decideOptionsOf, listedOf } from './plan-decide-all.js';
import type { PlanLabel } from './plan-decisions.js';
import { planHeldBack } from './plan-held-back.js';
import { planRenames, type RenamedItem } from './plan-renames.js';
import { planReuses } from './plan-reuses.js';
import { type PlanSource, planSourceOf } from './plan-source.js';
import { planSummary } from './plan-summary.js';
import {
  mostItCanCost,
  type PlanItem,
  type PreviousBody,
  type PreviousVars,
  type Walk,
  walkItems,
} from './plan-walk.js';

export type { AccountCheck, PlanAccount } from './plan-account.js';
export type { PlanLabel } from './plan-decisions.js';
export type { PlanItem } from './plan-walk.js';

/**
 * What `run` would do, computed from the manifest, the ledger and (optionally) GET /account
 * alone. Pure, so the same decisions are testable without a process, a file or a network.
 */

export interface PlanTotals extends Record<PlanLabel, number>, FileProblemCounts {
  items: number;
  /** Items the next run would submit (new, changed, retry, and expired ones it regenerates). */
  to_submit: number;
  /**
   * Items the run also tries, not in to_submit, that fit in budget_usd only if the prices not seen
   * yet leave room for their max_cost_usd (plan-budget.ts); their label is what they are (new, ...).
   */
  budget_permitting: number;
  removed: number;
  stray_files: number;
  spent_usd: string;
  refunded_usd: string;
  reserved_usd: string;
  budget_usd: string | null;
  budget_left_usd: string | null;
  /** Sum over the items that would be submitted; null when any of them has no estimate. */
  estimate_usd: string | null;
  /**
   * Prices already paid for the same model and input shape, over the items to submit that have
   * one; null when none has (then only at_most_usd is known). Never a cap or a guess.
   */
  expected_usd: string | null;
  /** How many of the items to submit expected_usd covers. */
  expected_items: number;
  /** How many charges in the ledger expected_usd is based on. */
  expected_samples: number;
  /** The caps of the items to submit, bounded by what is left of the budget; null: unbounded. */
  at_most_usd: string | null;
  /**
   * Of the `reused` items, those that copy the take of another item of this run asking for the very
   * same request (plan-copies.ts): generated once, not found already paid for.
   */
  copies: number;
  /** The distinct requests those copies copy. */
  copied_requests: number;
}

export interface PlanDocument {
  manifest: string;
  /** The one line `run` also prints before it spends anything. */
  summary: string;
  items: PlanItem[];
  /** Items renamed with their request unchanged: the new id takes the old one's paid result. */
  renamed: RenamedItem[];
  removed: RemovedItem[];
  /** Files in the output folder that no item owns; null when the folder was not looked at. */
  stray_files: string[] | null;
  /** Why a stray file is not taken for an output of the batch, by its path as in stray_files. */
  stray_reasons?: Record<string, string>;
  totals: PlanTotals;
  /** Manifest items asking for more than one variant with no keeper yet (`mediabatch keep`). */
  without_keeper?: string[];
  /** Keepers whose variant or item the manifest no longer asks for (docs/gallery.md, "Keepers"). */
  keepers_outside_manifest?: KeeperOutsideManifest[];
  /** A shared batch's definition against the manifest (docs/shared-ledger.md); absent for a SQLite ledger. */
  definition?: {
    state: 'first' | 'same' | 'differs' | 'redefine';
    revision: number | null;
    message: string | null;
  };
  /** As in the status document: `stat`, `sha256` (--verify), or null when files were not looked at. */
  file_check: FileCheckMode | null;
  /** Outputs paid for and not saved yet (value-at-risk.ts). */
  value_at_risk: ValueAtRisk;
  account: PlanAccount | null;
  /**
   * What `run` says before it pays again for items whose jobs the service lost (`mediabatch
   * forget`); null when there are none.
   */
  pays_again: string | null;
  warnings: string[];
}

/** What the command read besides the manifest and the ledger rows. */
export interface PlanInputs {
  previousBody?: PreviousBody;
  previousVars?: PreviousVars;
  /** Every file under the output folder (absolute paths); null when it was not listed. */
  outputFiles?: readonly string[] | null;
  /** Why a stray file is a stranger (its sidecar), or null. */
  strayWhy?: (path: string) => string | null;
  regenerateExpired?: boolean;
  /** run's flags: --retry-failed, --redo and --only change what it submits. */
  retryFailed?: boolean;
  redo?: readonly string[];
  only?: ReadonlySet<string> | null;
  fileCheck?: FileCheckMode;
  /** Whether a saved take's files are still as saved, for a take reused by its request; default: yes. */
  takeIsThere?: (take: ReusableTake) => boolean;
}

/** The plan from a ledger held in memory whole (run's summary line, tests). */
export function buildPlanReport(
  manifest: Manifest,
  view: LedgerView,
  account: AccountCheck | null,
  nowMs: number,
  inputs: PlanInputs = {},
): PlanDocument {
  return buildPlan(manifest, planSourceOf(view), account, nowMs, inputs);
}

/** `decided`: the decisions a streamed plan made as the entries went past (plan-streamed.ts); else made here. */
export function buildPlan(
  manifest: Manifest,
  source: PlanSource,
  account: AccountCheck | null,
  nowMs: number,
  inputs: PlanInputs = {},
  decided?: Decided,
): PlanDocument {
  const money = source.money;
  const budgetLeft = budgetLeftMicros(manifest.budgetMicros, money);
  // --only: the plan speaks of the selected items; the others are neither run nor removed.
  const only = inputs.only ?? null;
  const listed = listedOf(manifest, only);
  const options = decideOptionsOf(inputs, source.fileProblems, nowMs, {
    attempts: source.rejected ?? [],
    manifest,
  });
  decided ??= decideAll(listed, source, options);
  const { decisions } = decided;
  const candidates = only ? notListed(manifest, decided.unlisted) : decided.unlisted;
  const renames = planRenames(listed.items, decided.unknown, candidates, decisions);
  const unlisted = renames.removed.map((entry) => entry.record!);
  planReuses(
    listed.items,
    decisions,
    source.reusableTakes,
    inputs.takeIsThere ?? (() => true),
    (item) => options.rejections?.asSent(item) ?? item,
    nowMs,
  );
  const shown = shownFrom(manifest.file);
  // An empty output folder has no stray files, whatever the ledger holds: skip reading its paths.
  const unowned = inputs.outputFiles
    ? foreignFiles(inputs.outputFiles, inputs.outputFiles.length > 0 ? source.itemFilePaths() : [])
    : null;
  // A job's files saved by a run stopped before it committed them are its output, not strangers.
  const savedEarly = savedBeforeCommitOf(unowned ?? [], manifest.name, unsavedJobs(source));
  const foreign = unowned === null ? null : unowned.filter((path) => !savedEarly.paths.has(path));
  // Before the walk prices anything: what run will not submit is not priced (plan-held-back.ts).
  const heldBack = foreign?.length
    ? planHeldBack(listed.items, decisions, manifest.outputDir, foreign, source.itemFilePaths(), shown)
    : [];
  const walk = walkItems(
    listed,
    decisions,
    source,
    budgetLeft,
    money.reservedMicros,
    inputs.previousBody,
    inputs.previousVars,
  );
  const problems = source.fileProblems;
  if (problems && problems.size > 0)
    for (const item of walk.items) {
      const files = problems.get(item.id);
      if (files) item.file_problems = shownProblems(files, nowMs, shown);
    }
  const removed = removedItems(unlisted, unlisted.length > 0 ? source.itemFilePaths() : [], shown);
  for (const item of walk.items) if (savedEarly.items.has(item.id)) item.reason = SAVED_BEFORE_COMMIT_WORDS;
  const stray = foreign === null ? null : foreign.map(shown).sort();
  const estimateTotal = walk.unknown > 0 ? null : walk.estimateTotal;
  const atMost = mostItCanCost(walk.capsTotal, walk.uncapped, budgetLeft);

  const copies = planCopies(walk.items);
  const warnings = planWarnings(manifest, source.unsaved, nowMs, walk);
  const copied = copiesWarning(copies, walk.items.length);
  if (copied !== null) warnings.push(copied);
  const again = paysAgainLine(walk, budgetLeft);
  if (again) warnings.push(again);
  warnings.push(...heldBack);
  if (account?.ok)
    warnings.push(...accountWarnings(account.account, estimateTotal, walk.toSubmit, manifest.concurrency));

  const totals = planTotals(manifest, walk, money, problems && problems.size > 0, {
    removed: removed.length,
    strayFiles: stray?.length ?? 0,
    budgetLeft,
    estimateTotal,
    atMost,
    copies,
  });
  return {
    manifest: manifest.name,
    summary: planSummary(totals),
    items: walk.items,
    renamed: renames.renamed,
    removed,
    stray_files: stray,
    ...(foreign?.length && inputs.strayWhy
      ? { stray_reasons: strayReasons(foreign, shown, inputs.strayWhy) }
      : {}),
    totals,
    file_check: source.fileProblems ? (inputs.fileCheck ?? 'stat') : null,
    value_at_risk: valueAtRisk(source.unsaved, nowMs),
    account: account === null ? null : toPlanAccount(account),
    pays_again: again,
    warnings,
  };
}

/** Of the entries the selection left out, those of items the manifest no longer lists at all. */
/** What plan says of an item whose job's files a stopped run saved but did not commit. */
const SAVED_BEFORE_COMMIT_WORDS =
  'its file was saved before the last run was stopped, with a sidecar naming its job: run records it, nothing to fetch or pay';

/** This ledger's succeeded jobs whose files it has not recorded, job id -> item. */
function unsavedJobs(source: PlanSource): Map<string, string> {
  return new Map(
    source.unsaved.flatMap((attempt) => (attempt.jobId ? [[attempt.jobId, attempt.itemId] as const] : [])),
  );
}

function notListed(manifest: Manifest, entries: readonly ItemEntry[]): ItemEntry[] {
  const ids = new Set(manifest.items.map((item) => item.id));
  return entries.filter((entry) => !ids.has(entry.itemId));
}

/** `2 items whose paid jobs the service lost are paid for again: expected $0.80, at most $2.00.` */
function paysAgainLine(walk: Walk, budgetLeft: Micros | null): string | null {
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
  manifest: Manifest,
  unsaved: PlanSource['unsaved'],
  nowMs: number,
  walk: Walk,
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
  const order = variantsOrderNote(manifest.items, { blocked, mayFit: walk.mayFit });
  if (order !== null) warnings.push(order);
  return warnings;
}

function planTotals(
  manifest: Manifest,
  walk: Walk,
  money: PlanSource['money'],
  anyProblem: boolean | undefined,
  found: {
    removed: number;
    strayFiles: number;
    budgetLeft: Micros | null;
    estimateTotal: Micros | null;
    atMost: Micros | null;
    copies: PlanCopies;
  },
): PlanTotals {
  const { budgetLeft, estimateTotal, atMost } = found;
  return {
    items: walk.items.length,
    ...walk.counts,
    to_submit: walk.toSubmit,
    budget_permitting: walk.mayFit,
    removed: found.removed,
    stray_files: found.strayFiles,
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
    ...countProblems(anyProblem ? walk.items : []),
  };
}
