import type { ItemEntry } from '../ledger/item-entries.js';
import { budgetLeftMicros, spentMicros } from '../ledger/money-totals.js';
import type { AttemptRecord, ItemRecord } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import { formatProblem } from '../manifest/index.js';
import { formatUsd, formatUsdHuman, type Micros } from '../money.js';
import { estimateItem, type PriceTable } from './cost-estimate.js';
import { type AccountCheck, accountWarnings, type PlanAccount, toPlanAccount } from './plan-account.js';
import { changedFields, type RemovedItem, removedItems, strayFiles } from './plan-changes.js';
import { type Decision, decideItem, PLAN_LABELS, type PlanLabel } from './plan-decisions.js';
import { type PlanSource, planSourceOf } from './plan-source.js';
import { planSummary } from './plan-summary.js';
import { shownFrom } from './shown-path.js';
import { expiryWarnings, type LedgerView } from './status-report.js';

export type { AccountCheck, PlanAccount } from './plan-account.js';
export type { PlanLabel } from './plan-decisions.js';

/**
 * What `run` would do, computed from the manifest, the ledger and (optionally) GET /account
 * alone. Pure, so the same decisions are testable without a process, a file or a network.
 */

export interface PlanItem {
  id: string;
  plan: PlanLabel;
  reason?: string;
  /** For a changed item: which fields differ from its last request (null: no request to compare). */
  changed_fields?: string[] | null;
  /** What submitting it would likely cost; null when it is not submitted or nothing is known. */
  estimate_usd: string | null;
}

export interface PlanTotals extends Record<PlanLabel, number> {
  items: number;
  /** Items the next run would submit (new, changed, retry, and expired ones it regenerates). */
  to_submit: number;
  removed: number;
  stray_files: number;
  spent_usd: string;
  refunded_usd: string;
  reserved_usd: string;
  budget_usd: string | null;
  budget_left_usd: string | null;
  /** Sum over the items that would be submitted; null when any of them has no estimate. */
  estimate_usd: string | null;
  /** The same as estimate_usd: prices already paid for the same model and shape, else the caps. */
  expected_usd: string | null;
  /** The caps of the items to submit, bounded by what is left of the budget; null: unbounded. */
  at_most_usd: string | null;
}

export interface PlanDocument {
  manifest: string;
  /** The one line `run` also prints before it spends anything. */
  summary: string;
  items: PlanItem[];
  removed: RemovedItem[];
  /** Files in the output folder that no item owns; null when the folder was not looked at. */
  stray_files: string[] | null;
  totals: PlanTotals;
  account: PlanAccount | null;
  warnings: string[];
}

/** What the command read besides the manifest and the ledger rows. */
export interface PlanInputs {
  /** The exact request body an attempt sent, to name the fields an edited item changed. */
  previousBody?: (attempt: AttemptRecord) => string | undefined;
  /** Every file under the output folder (absolute paths); null when it was not listed. */
  outputFiles?: readonly string[] | null;
  regenerateExpired?: boolean;
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

export function buildPlan(
  manifest: Manifest,
  source: PlanSource,
  account: AccountCheck | null,
  nowMs: number,
  inputs: PlanInputs = {},
): PlanDocument {
  const money = source.money;
  const budgetLeft = budgetLeftMicros(manifest.budgetMicros, money);
  const { decisions, unlisted } = decideAll(manifest, source.entries, inputs.regenerateExpired ?? false);
  const walk = walkItems(manifest, decisions, source, budgetLeft, money.reservedMicros, inputs);
  const shown = shownFrom(manifest.file);
  const removed = removedItems(unlisted, unlisted.length > 0 ? source.itemFilePaths() : [], shown);
  // An empty output folder has no stray files, whatever the ledger holds: skip reading its paths.
  const stray = inputs.outputFiles
    ? strayFiles(inputs.outputFiles, inputs.outputFiles.length > 0 ? source.itemFilePaths() : [], shown)
    : null;
  const { counts, toSubmit, unknown } = walk;
  const estimateTotal = unknown > 0 ? null : walk.estimateTotal;
  const atMost = mostItCanCost(walk.capsTotal, walk.uncapped, budgetLeft);

  const warnings = manifest.warnings.map(formatProblem);
  warnings.push(...expiryWarnings(source.unsaved, nowMs));
  if (unknown > 0) {
    warnings.push(
      `${unknown} item${unknown === 1 ? '' : 's'} to submit ${unknown === 1 ? 'has' : 'have'} no price seen in the ledger and no max_cost_usd: the cost estimate is unknown`,
    );
  }
  if (counts.blocked_by_budget > 0) {
    warnings.push(
      `${counts.blocked_by_budget} item${counts.blocked_by_budget === 1 ? '' : 's'} will not fit in what is left of budget_usd (${formatUsdHuman(budgetLeft ?? 0)}): raise budget_usd to submit them`,
    );
  }
  const planAccount = account === null ? null : toPlanAccount(account);
  if (account?.ok) warnings.push(...accountWarnings(account.account, estimateTotal, toSubmit));

  const totals: PlanTotals = {
    items: walk.items.length,
    ...counts,
    to_submit: toSubmit,
    removed: removed.length,
    stray_files: stray?.length ?? 0,
    spent_usd: formatUsd(spentMicros(money)),
    refunded_usd: formatUsd(money.refundedMicros),
    reserved_usd: formatUsd(money.reservedMicros),
    budget_usd: manifest.budgetMicros === null ? null : formatUsd(manifest.budgetMicros),
    budget_left_usd: budgetLeft === null ? null : formatUsd(budgetLeft),
    estimate_usd: estimateTotal === null ? null : formatUsd(estimateTotal),
    expected_usd: estimateTotal === null ? null : formatUsd(estimateTotal),
    at_most_usd: atMost === null ? null : formatUsd(atMost),
  };
  return {
    manifest: manifest.name,
    summary: planSummary(totals),
    items: walk.items,
    removed,
    stray_files: stray,
    totals,
    account: planAccount,
    warnings,
  };
}

/**
 * Each manifest item's decision, by position, as the ledger's entries stream past (so no entry is
 * kept), and the rows of items the manifest no longer lists, in the ledger's order.
 */
function decideAll(
  manifest: Manifest,
  entries: Iterable<ItemEntry>,
  regenerateExpired: boolean,
): { decisions: Array<Decision | undefined>; unlisted: ItemRecord[] } {
  const position = new Map<string, number>();
  manifest.items.forEach((item, index) => {
    position.set(item.id, index);
  });
  const decisions = new Array<Decision | undefined>(manifest.items.length);
  const unlisted: ItemRecord[] = [];
  for (const entry of entries) {
    const index = position.get(entry.itemId);
    if (index !== undefined)
      decisions[index] = decideItem(manifest.items[index]!, entry, { regenerateExpired });
    else if (entry.record) unlisted.push(entry.record);
  }
  manifest.items.forEach((item, index) => {
    decisions[index] ??= decideItem(item, undefined, { regenerateExpired });
  });
  return { decisions, unlisted };
}

interface Walk {
  items: PlanItem[];
  counts: Record<PlanLabel, number>;
  toSubmit: number;
  /** Items to submit with no estimate at all. */
  unknown: number;
  estimateTotal: Micros;
  capsTotal: Micros;
  uncapped: number;
}

/** The items to submit in manifest order, as run queues them, spending the estimates. */
function walkItems(
  manifest: Manifest,
  decisions: ReadonlyArray<Decision | undefined>,
  source: PlanSource,
  budgetLeft: Micros | null,
  reserved: Micros,
  inputs: PlanInputs,
): Walk {
  const walk: Walk = {
    items: [],
    counts: Object.fromEntries(PLAN_LABELS.map((label) => [label, 0])) as Record<PlanLabel, number>,
    toSubmit: 0,
    unknown: 0,
    estimateTotal: 0,
    capsTotal: 0,
    uncapped: 0,
  };
  let left = budgetLeft;
  let prices: PriceTable | undefined;
  walk.items = manifest.items.map((item, index): PlanItem => {
    const decided = decisions[index]!;
    let label: PlanLabel = decided.label;
    let reason = decided.reason;
    let fields: string[] | null | undefined;
    let estimate: Micros | null = null;
    if (decided.label === 'changed') {
      fields = changedFields(item, decided.changedSince && inputs.previousBody?.(decided.changedSince));
      reason = fields?.length
        ? `changed since the last run: ${fields.join(', ')}`
        : 'model, input, metadata or max_cost_usd changed since the last run';
    }
    if (decided.submit) {
      prices ??= source.prices();
      estimate = estimateItem(item, prices).micros;
      // run reserves the item's cap (or the whole remaining budget without one) before sending it.
      const need = item.maxCostMicros ?? estimate;
      const fits = left === null || (need === null ? left > 0 : need <= left);
      if (!fits) {
        label = 'blocked_by_budget';
        reason = blockedReason(need, left!, reserved);
      } else {
        walk.toSubmit += 1;
        if (left !== null && estimate !== null) left -= estimate;
        if (estimate === null) walk.unknown += 1;
        else walk.estimateTotal += estimate;
        if (item.maxCostMicros === null) walk.uncapped += 1;
        else walk.capsTotal += item.maxCostMicros;
      }
    }
    walk.counts[label] += 1;
    return planItemOf(item.id, label, reason, fields, estimate === null ? null : formatUsd(estimate));
  });
  return walk;
}

function planItemOf(
  id: string,
  plan: PlanLabel,
  reason: string | undefined,
  fields: string[] | null | undefined,
  estimate_usd: string | null,
): PlanItem {
  // The common item has neither: spreading two empty objects into 100,000 literals cost more
  // than the rest of the walk.
  if (reason === undefined && fields === undefined) return { id, plan, estimate_usd };
  return {
    id,
    plan,
    ...(reason === undefined ? {} : { reason }),
    ...(fields === undefined ? {} : { changed_fields: fields }),
    estimate_usd,
  };
}

/**
 * The caps bound what the items to submit can cost; an item without one reserves all that is
 * left of the budget, and with no budget either nothing bounds it.
 */
function mostItCanCost(caps: Micros, uncapped: number, budgetLeft: Micros | null): Micros | null {
  const bounded = Math.max(0, budgetLeft ?? Number.POSITIVE_INFINITY);
  const most = Math.min(uncapped > 0 ? Number.POSITIVE_INFINITY : caps, bounded);
  return Number.isFinite(most) ? most : null;
}

function blockedReason(need: Micros | null, left: Micros, reserved: Micros): string {
  const shortBy =
    need === null
      ? 'nothing is left'
      : `needs ${formatUsdHuman(need)} but ${formatUsdHuman(Math.max(0, left))} is left`;
  // run waits for unanswered attempts before giving up on an item, so say what may still free up.
  const pending =
    reserved > 0 ? `; ${formatUsdHuman(reserved)} reserved by unanswered attempts may free up` : '';
  return `${shortBy} of budget_usd${pending}`;
}
