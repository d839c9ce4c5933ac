import type { Account } from '../api/schemas.js';
import { budgetLeftMicros, moneyTotalsOf, spentMicros } from '../ledger/money-totals.js';
import type { ItemRecord } from '../ledger/records.js';
import type { Manifest } from '../manifest/index.js';
import { formatUsd, formatUsdHuman, humanUsd, type Micros, parseUsd } from '../money.js';
import { latestAttempts, planItem } from '../runner/item-plan.js';
import { requestHash } from '../runner/request.js';
import { estimateItem, pricesSeen } from './cost-estimate.js';
import { buildStatusReport, type LedgerView } from './status-report.js';

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
  /** What submitting it would likely cost; null when it is not submitted or nothing is known. */
  estimate_usd: string | null;
}

/** The outcome of GET /account, as the command saw it (the key never reaches this module). */
export type AccountCheck =
  | { baseUrl: string; ok: true; account: Account }
  | { baseUrl: string; ok: false; status: number | null; code: string | null; message: string };

export interface PlanAccount {
  base_url: string;
  wallet_enabled: boolean | null;
  balance_usd: string | null;
  concurrency: { active: number; limit: number } | null;
  error: { status: number | null; code: string | null; message: string } | null;
}

export interface PlanDocument {
  manifest: string;
  items: PlanItem[];
  totals: { items: number } & Record<PlanLabel, number> & {
      spent_usd: string;
      refunded_usd: string;
      reserved_usd: string;
      budget_usd: string | null;
      budget_left_usd: string | null;
      /** Sum over the items that would be submitted; null when any of them has no estimate. */
      estimate_usd: string | null;
    };
  account: PlanAccount | null;
  warnings: string[];
}

export function buildPlanReport(
  manifest: Manifest,
  view: LedgerView,
  account: AccountCheck | null,
  nowMs: number,
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

  const items = manifest.items.map((item): PlanItem => {
    const record = records.get(item.id);
    const attempt = latest.get(item.id);
    const decided = planItem(requestHash(item), record, attempt, { regenerateExpired: false });
    let label: PlanLabel = decided.label;
    let reason: string | undefined;
    let estimate: Micros | null = null;
    switch (decided.label) {
      case 'changed':
        reason = 'model, input, metadata or max_cost_usd changed since the last run';
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
        reason = 'outputs were deleted before they were saved; run --regenerate-expired pays for them again';
        break;
      case 'failed':
        reason = `${record?.errorCode ?? 'failed'}${record?.errorMessage ? `: ${record.errorMessage}` : ''} (skipped)`;
        break;
    }
    if (decided.action === 'submit' && decided.label !== 'expired') {
      estimate = estimateItem(item, prices).micros;
      // run reserves the item's cap (or the whole remaining budget without one) before sending it.
      const need = item.maxCostMicros ?? estimate;
      const fits = left === null || (need === null ? left > 0 : need <= left);
      if (!fits) {
        label = 'blocked_by_budget';
        reason = blockedReason(need, left!, reserved);
      } else {
        if (left !== null && estimate !== null) left -= estimate;
        if (estimate === null) unknown += 1;
        else if (estimateTotal !== null) estimateTotal += estimate;
      }
    }
    counts[label] += 1;
    return {
      id: item.id,
      plan: label,
      ...(reason === undefined ? {} : { reason }),
      estimate_usd: estimate === null ? null : formatUsd(estimate),
    };
  });
  if (unknown > 0) estimateTotal = null;

  const warnings = expiringOutputs(manifest, view, nowMs);
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
  if (account?.ok) warnings.push(...accountWarnings(account.account, estimateTotal, counts));

  return {
    manifest: manifest.name,
    items,
    totals: {
      items: items.length,
      ...counts,
      spent_usd: formatUsd(spentMicros(money)),
      refunded_usd: formatUsd(money.refundedMicros),
      reserved_usd: formatUsd(reserved),
      budget_usd: manifest.budgetMicros === null ? null : formatUsd(manifest.budgetMicros),
      budget_left_usd: budgetLeft === null ? null : formatUsd(budgetLeft),
      estimate_usd: estimateTotal === null ? null : formatUsd(estimateTotal),
    },
    account: planAccount,
    warnings,
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

function toPlanAccount(check: AccountCheck): PlanAccount {
  if (!check.ok) {
    return {
      base_url: check.baseUrl,
      wallet_enabled: null,
      balance_usd: null,
      concurrency: null,
      error: { status: check.status, code: check.code, message: check.message },
    };
  }
  const { account } = check;
  return {
    base_url: check.baseUrl,
    wallet_enabled: account.balance.enabled,
    balance_usd: account.balance.amount_usd,
    concurrency: { active: account.concurrency.active, limit: account.concurrency.limit },
    error: null,
  };
}

function accountWarnings(
  account: Account,
  estimate: Micros | null,
  counts: Record<PlanLabel, number>,
): string[] {
  const warnings: string[] = [];
  const toSubmit = counts.new + counts.changed + counts.retry;
  if (!account.balance.enabled) {
    warnings.push(
      'the API wallet is disabled: every submission would be refused (402 wallet_not_enabled); ask the operator to enable it',
    );
  }
  const balance = parseUsd(account.balance.amount_usd);
  if (toSubmit > 0 && balance !== null) {
    if (estimate !== null && balance < estimate) {
      warnings.push(
        `the balance ${humanUsd(account.balance.amount_usd)} is below the estimate ${formatUsdHuman(estimate)} for the items to submit: some would be refused (402 insufficient_balance)`,
      );
    } else if (balance === 0) {
      warnings.push('the balance is $0.00: every submission would be refused (402 insufficient_balance)');
    }
  }
  if (account.concurrency.limit === 0) {
    warnings.push('the workspace concurrency limit is 0: nothing can be submitted');
  } else if (toSubmit > 0 && account.concurrency.active >= account.concurrency.limit) {
    warnings.push(
      `the workspace is at its concurrency limit (${account.concurrency.active}/${account.concurrency.limit}): run will wait for free slots`,
    );
  }
  return warnings;
}
