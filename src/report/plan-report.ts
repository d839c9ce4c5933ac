import { isAbsolute, relative } from 'node:path';
import { budgetLeftMicros, moneyTotalsOf, spentMicros } from '../ledger/money-totals.js';
import type { AttemptRecord, ItemRecord } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import { formatProblem } from '../manifest/index.js';
import { formatUsd, formatUsdHuman, type Micros } from '../money.js';
import { latestAttempts, planItem } from '../runner/item-plan.js';
import { requestHash } from '../runner/request.js';
import { estimateItem, pricesSeen } from './cost-estimate.js';
import { type AccountCheck, accountWarnings, type PlanAccount, toPlanAccount } from './plan-account.js';
import { changedFields, type RemovedItem, removedItems, strayFiles } from './plan-changes.js';
import { planSummary } from './plan-summary.js';
import { buildStatusReport, type LedgerView } from './status-report.js';

export type { AccountCheck, PlanAccount } from './plan-account.js';

/**
 * What `run` would do, computed from the manifest, the ledger and (optionally) GET /account
 * alone. Pure, so the same decisions are testable without a process, a file or a network.
 */

export type PlanLabel =
  | 'new'
  | 'changed'
  | 'in_flight'
  | 'done'
  | 'retry'
  | 'expired'
  | 'failed'
  | 'blocked_by_budget';

export const PLAN_LABELS: readonly PlanLabel[] = [
  'new',
  'changed',
  'in_flight',
  'done',
  'retry',
  'expired',
  'failed',
  'blocked_by_budget',
];

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

export function buildPlanReport(
  manifest: Manifest,
  view: LedgerView,
  account: AccountCheck | null,
  nowMs: number,
  inputs: PlanInputs = {},
): PlanDocument {
  const money = moneyTotalsOf(view.attempts);
  const reserved = money.reservedMicros;
  const budgetLeft = budgetLeftMicros(manifest.budgetMicros, money);
  const records = new Map<string, ItemRecord>(view.items.map((record) => [record.itemId, record]));
  const latest = latestAttempts(view.attempts);
  const prices = pricesSeen(view.attempts);
  const counts = Object.fromEntries(PLAN_LABELS.map((label) => [label, 0])) as Record<PlanLabel, number>;

  // Walk the items to submit in manifest order, as run queues them, spending the estimates.
  let left = budgetLeft;
  let estimateTotal: Micros | null = 0;
  let unknown = 0;
  let capsTotal = 0;
  let uncapped = 0;
  let toSubmit = 0;
  const regenerateExpired = inputs.regenerateExpired ?? false;

  const items = manifest.items.map((item): PlanItem => {
    const record = records.get(item.id);
    const attempt = latest.get(item.id);
    const decided = planItem(requestHash(item), record, attempt, { regenerateExpired });
    let label: PlanLabel = decided.label;
    let reason: string | undefined;
    let fields: string[] | null | undefined;
    let estimate: Micros | null = null;
    switch (decided.label) {
      case 'changed':
        fields = changedFields(item, attempt && inputs.previousBody?.(attempt));
        reason = fields?.length
          ? `changed since the last run: ${fields.join(', ')}`
          : 'model, input, metadata or max_cost_usd changed since the last run';
        break;
      case 'retry':
        reason = retryReason(decided.reason, record);
        break;
      case 'in_flight':
        reason =
          decided.attempt.state === 'prepared'
            ? `attempt ${decided.attempt.seq} has no recorded answer: resent with its own key and body`
            : `job ${decided.attempt.jobId} ${decided.attempt.jobStatus ?? 'accepted'}: watched and downloaded`;
        break;
      case 'expired':
        reason =
          decided.action === 'submit'
            ? 'outputs were deleted before they were saved: generated and paid for again'
            : 'outputs were deleted before they were saved; run --regenerate-expired pays for them again';
        break;
      case 'failed':
        reason = `${record?.errorCode ?? 'failed'}${record?.errorMessage ? `: ${record.errorMessage}` : ''} (skipped)`;
        break;
    }
    if (decided.action === 'submit') {
      estimate = estimateItem(item, prices).micros;
      // run reserves the item's cap (or the whole remaining budget without one) before sending it.
      const need = item.maxCostMicros ?? estimate;
      const fits = left === null || (need === null ? left > 0 : need <= left);
      if (!fits) {
        label = 'blocked_by_budget';
        reason = blockedReason(need, left!, reserved);
      } else {
        toSubmit += 1;
        if (left !== null && estimate !== null) left -= estimate;
        if (estimate === null) unknown += 1;
        else if (estimateTotal !== null) estimateTotal += estimate;
        if (item.maxCostMicros === null) uncapped += 1;
        else capsTotal += item.maxCostMicros;
      }
    }
    counts[label] += 1;
    return {
      id: item.id,
      plan: label,
      ...(reason === undefined ? {} : { reason }),
      ...(fields === undefined ? {} : { changed_fields: fields }),
      estimate_usd: estimate === null ? null : formatUsd(estimate),
    };
  });
  if (unknown > 0) estimateTotal = null;
  const atMost = mostItCanCost(capsTotal, uncapped, budgetLeft);
  const shown = shownFrom(manifest.file);
  const removed = removedItems(manifest, view, shown);
  const stray = inputs.outputFiles ? strayFiles(inputs.outputFiles, view, shown) : null;

  const warnings = manifest.warnings.map(formatProblem);
  warnings.push(...expiringOutputs(manifest, view, nowMs));
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
    items: items.length,
    ...counts,
    to_submit: toSubmit,
    removed: removed.length,
    stray_files: stray?.length ?? 0,
    spent_usd: formatUsd(spentMicros(money)),
    refunded_usd: formatUsd(money.refundedMicros),
    reserved_usd: formatUsd(reserved),
    budget_usd: manifest.budgetMicros === null ? null : formatUsd(manifest.budgetMicros),
    budget_left_usd: budgetLeft === null ? null : formatUsd(budgetLeft),
    estimate_usd: estimateTotal === null ? null : formatUsd(estimateTotal),
    expected_usd: estimateTotal === null ? null : formatUsd(estimateTotal),
    at_most_usd: atMost === null ? null : formatUsd(atMost),
  };
  return {
    manifest: manifest.name,
    summary: planSummary(totals),
    items,
    removed,
    stray_files: stray,
    totals,
    account: planAccount,
    warnings,
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

/** Paths relative to the manifest's folder when inside it, as status shows them. */
function shownFrom(manifestFile: string): (path: string) => string {
  const baseDir = manifestFile.replace(/[/\\][^/\\]*$/, '');
  return (path) => {
    const rel = relative(baseDir, path);
    return rel.startsWith('..') || isAbsolute(rel) ? path : rel;
  };
}

/**
 * The same "expires within 6 hours" warnings as status, from the status report itself so that
 * both commands say the same words; only the candidate attempts go in, because a full status
 * report of 100,000 items is work this command does not need.
 */
function expiringOutputs(manifest: Manifest, view: LedgerView, nowMs: number): string[] {
  const candidates = view.attempts.filter(
    (attempt) => attempt.jobStatus === 'succeeded' && !attempt.filesSaved && attempt.expiresAt !== null,
  );
  return buildStatusReport({ ...manifest, items: [] }, { items: [], attempts: candidates, files: [] }, nowMs)
    .warnings;
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

function retryReason(reason: string, record: ItemRecord | undefined): string {
  if (reason === 'interrupted') return 'an earlier run stopped before this item was answered';
  if (reason === 'budget_exceeded') return 'did not fit in budget_usd last time';
  const message = record?.errorMessage ? `: ${record.errorMessage}` : '';
  return `last attempt ended with ${reason}${message}; a re-run tries again with a new key`;
}
