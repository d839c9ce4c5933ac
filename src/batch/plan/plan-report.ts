import { countProblems, shownProblems } from '../../documents/file-problems.js';
import { shownFrom } from '../../documents/shown-path.js';
import type { FileCheckMode } from '../../documents/status-report.js';
import type { LedgerView } from '../../documents/status-view.js';
import { budgetLeftMicros, type ItemEntry, type ReusableTake } from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import { hasVariants } from '../plan-decisions/plan-budget.js';
import { removedItems } from '../plan-decisions/plan-changes.js';
import { planCopies } from '../plan-decisions/plan-copies.js';
import {
  type Decided,
  decideAll,
  decideOptionsOf,
  listedOf,
  variantsOf,
} from '../plan-decisions/plan-decide-all.js';
import { planHeldBack } from '../plan-decisions/plan-held-back.js';
import { planRenames } from '../plan-decisions/plan-renames.js';
import { planReuses } from '../plan-decisions/plan-reuses.js';
import { type PlanSource, planSourceOf } from '../plan-decisions/plan-source.js';
import { type PreviousBody, type PreviousVars, walkItems } from '../plan-decisions/plan-walk.js';
import type { AccountCheck } from './plan-account.js';
import { finishPlan, SAVED_BEFORE_COMMIT_WORDS, strangers, withItems } from './plan-finish.js';

export type { PlanLabel } from '../plan-decisions/plan-decisions.js';
export type { PlanItem } from '../plan-decisions/plan-walk.js';
export type { AccountCheck, PlanAccount } from './plan-account.js';

/**
 * What `run` would do, computed from the manifest, the ledger and (optionally) GET /account
 * alone. Pure, so the same decisions are testable without a process, a file or a network.
 */

import type { PlanDocument } from './plan-document.js';

export type { PlanDocument, PlanTotals } from './plan-document.js';

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
    nowMs,
  );
  const shown = shownFrom(manifest.file);
  const { foreign, savedEarly } = strangers(
    manifest,
    source.unsaved,
    inputs.outputFiles,
    source.itemFilePaths,
  );
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
  for (const item of walk.items) if (savedEarly.has(item.id)) item.reason = SAVED_BEFORE_COMMIT_WORDS;
  const { items, ...walked } = walk;
  const found = {
    walk: walked,
    items: items.length,
    copies: planCopies(items),
    problems: countProblems(items),
    variants: hasVariants(manifest.items),
    heldBack,
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
