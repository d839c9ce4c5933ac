import { countProblems, type FileProblemCounts, shownProblems } from '../../documents/file-problems.js';
import type { KeeperOutsideManifest } from '../../documents/kept-records.js';
import { shownFrom } from '../../documents/shown-path.js';
import type { FileCheckMode } from '../../documents/status-report.js';
import type { LedgerView } from '../../documents/status-view.js';
import type { ValueAtRisk } from '../../documents/value-at-risk.js';
import type { ItemEntry } from '../../ledger/item-entries.js';
import { budgetLeftMicros } from '../../ledger/money-totals.js';
import type { ReusableTake } from '../../ledger/reused-take.js';
import type { Manifest } from '../../manifest/index.js';
import type { AccountCheck, PlanAccount } from './plan-account.js';
import { hasVariants } from './plan-budget.js';
import { type RemovedItem, removedItems } from './plan-changes.js';
import { planCopies } from './plan-copies.js';
import { type Decided, decideAll, decideOptionsOf, listedOf, variantsOf } from './plan-decide-all.js';
import type { PlanLabel } from './plan-decisions.js';
import { finishPlan, InTheWay, SAVED_BEFORE_COMMIT_WORDS, strangers, withItems } from './plan-finish.js';
import { planRenames, type RenamedItem } from './plan-renames.js';
import { planReuses } from './plan-reuses.js';
import { type PlanSource, planSourceOf } from './plan-source.js';
import { type PlanItem, type PreviousBody, type PreviousVars, walkItems } from './plan-walk.js';

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

/**
 * `Items`: the items held whole, or a streamed plan's, read back each time they are iterated
 * (documents/spooled-items.ts).
 */
export interface PlanDocument<Items extends Iterable<PlanItem> = PlanItem[]> {
  manifest: string;
  /** The one line `run` also prints before it spends anything. */
  summary: string;
  items: Items;
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
    variantOf: variantsOf(manifest),
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
  );
  const walk = walkItems(
    listed,
    decisions,
    source,
    budgetLeft,
    money.reservedMicros,
    inputs.previousBody,
    inputs.previousVars,
  );
  const shown = shownFrom(manifest.file);
  const problems = source.fileProblems;
  if (problems && problems.size > 0)
    for (const item of walk.items) {
      const files = problems.get(item.id);
      if (files) item.file_problems = shownProblems(files, nowMs, shown);
    }
  const removed = removedItems(unlisted, unlisted.length > 0 ? source.itemFilePaths() : [], shown);
  const { foreign, savedEarly } = strangers(
    manifest,
    source.unsaved,
    inputs.outputFiles,
    source.itemFilePaths,
  );
  for (const item of walk.items) if (savedEarly.has(item.id)) item.reason = SAVED_BEFORE_COMMIT_WORDS;
  const inTheWay = foreign !== null && foreign.length > 0 ? new InTheWay(manifest.outputDir, foreign) : null;
  if (inTheWay !== null)
    listed.items.forEach((item, index) => {
      inTheWay.see(item, walk.items[index]!);
    });
  const { items, ...walked } = walk;
  const found = {
    walk: walked,
    items: items.length,
    copies: planCopies(items),
    problems: countProblems(items),
    variants: hasVariants(manifest.items),
    inTheWay,
  };
  const rest = finishPlan(manifest, source, account, nowMs, inputs, found, {
    renamed: renames.renamed,
    removed,
    foreign,
  });
  return withItems(rest, items);
}

function notListed(manifest: Manifest, entries: readonly ItemEntry[]): ItemEntry[] {
  const ids = new Set(manifest.items.map((item) => item.id));
  return entries.filter((entry) => !ids.has(entry.itemId));
}
