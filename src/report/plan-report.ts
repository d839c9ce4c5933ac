import type { Account } from '../api/schemas.js';
import { budgetLeftMicros, spentMicros } from '../ledger/money-totals.js';
import type { PlanEntry } from '../ledger/read-views.js';
import type { AttemptRecord, ItemRecord, MoneyTotals } from '../ledger/records.js';
import type { Manifest, ManifestItem } from '../manifest/index.js';
import { formatUsd, type Micros, parseUsd } from '../money.js';
import { latestAttempts, planItem } from '../runner/item-plan.js';
import { requestHash } from '../runner/request.js';
import { estimateItem, type PriceTable, pricesSeen } from './cost-estimate.js';
import { buildStatus, type LedgerView, summarizeView } from './status-report.js';

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

/**
 * What the plan is computed from: each item's row and latest attempt (any order), the money sums,
 * the prices seen and the succeeded jobs whose files are not saved yet. `plan` streams the
 * entries from SQLite; planSourceOf derives the same from a ledger held in memory.
 */
export interface PlanSource {
  entries: Iterable<PlanEntry>;
  money: MoneyTotals;
  prices: PriceTable;
  unsaved: readonly AttemptRecord[];
}

export function buildPlanReport(
  manifest: Manifest,
  view: LedgerView,
  account: AccountCheck | null,
  nowMs: number,
): PlanDocument {
  return buildPlan(manifest, planSourceOf(view), account, nowMs);
}

function planSourceOf(view: LedgerView): PlanSource {
  const records = new Map<string, ItemRecord>(view.items.map((record) => [record.itemId, record]));
  const latest = latestAttempts(view.attempts);
  const ids = new Set([...records.keys(), ...latest.keys()]);
  const status = summarizeView({ items: [], attempts: view.attempts, files: [] });
  return {
    entries: [...ids].map((itemId) => ({ itemId, record: records.get(itemId), attempt: latest.get(itemId) })),
    money: status.money,
    prices: pricesSeen(view.attempts),
    unsaved: status.unsaved,
  };
}

/** An item's plan before the budget walk: what planItem decided, said in words. */
interface Decided {
  label: PlanLabel;
  submit: boolean;
  reason?: string;
}

function decide(item: ManifestItem, entry: PlanEntry | undefined): Decided {
  const record = entry?.record;
  // Without a row or an attempt an item is new whatever it holds: no need to hash it.
  const decided = entry
    ? planItem(requestHash(item), record, entry.attempt, { regenerateExpired: false })
    : planItem('', undefined, undefined, { regenerateExpired: false });
  const submit = decided.action === 'submit' && decided.label !== 'expired';
  switch (decided.label) {
    case 'changed':
      return {
        label: 'changed',
        submit,
        reason: 'model, input, metadata or max_cost_usd changed since the last run',
      };
    case 'retry':
      return { label: 'retry', submit, reason: retryReason(decided.reason, record) };
    case 'in_flight':
      return {
        label: 'in_flight',
        submit,
        reason:
          decided.attempt.state === 'prepared'
            ? `attempt ${decided.attempt.seq} has no recorded answer: resent with its own key and body`
            : `job ${decided.attempt.jobId} ${decided.attempt.jobStatus ?? 'accepted'}: watched and downloaded`,
      };
    case 'expired':
      return {
        label: 'expired',
        submit,
        reason: 'outputs were deleted before they were saved; run --regenerate-expired pays for them again',
      };
    case 'failed':
      return {
        label: 'failed',
        submit,
        reason: `${record?.errorCode ?? 'failed'}${record?.errorMessage ? `: ${record.errorMessage}` : ''} (skipped)`,
      };
    default:
      return { label: decided.label, submit };
  }
}

export function buildPlan(
  manifest: Manifest,
  source: PlanSource,
  account: AccountCheck | null,
  nowMs: number,
): PlanDocument {
  const money = source.money;
  const reserved = money.reservedMicros;
  const budgetLeft = budgetLeftMicros(manifest.budgetMicros, money);
  const position = new Map<string, number>();
  manifest.items.forEach((item, index) => {
    position.set(item.id, index);
  });
  const decisions = new Array<Decided | undefined>(manifest.items.length);
  for (const entry of source.entries) {
    const index = position.get(entry.itemId);
    if (index !== undefined) decisions[index] = decide(manifest.items[index]!, entry);
  }
  const prices = source.prices;
  const counts = Object.fromEntries(PLAN_LABELS.map((label) => [label, 0])) as Record<PlanLabel, number>;

  // Walk the items to submit in manifest order, as run queues them, spending the estimates.
  let left = budgetLeft;
  let estimateTotal: Micros | null = 0;
  let unknown = 0;

  const items = manifest.items.map((item, index): PlanItem => {
    const decided = decisions[index] ?? decide(item, undefined);
    let label = decided.label;
    let reason = decided.reason;
    let estimate: Micros | null = null;
    if (decided.submit) {
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

  const warnings = expiringOutputs(manifest, source, nowMs);
  if (unknown > 0) {
    warnings.push(
      `${unknown} item${unknown === 1 ? '' : 's'} to submit ${unknown === 1 ? 'has' : 'have'} no price seen in the ledger and no max_cost_usd: the cost estimate is unknown`,
    );
  }
  if (counts.blocked_by_budget > 0) {
    warnings.push(
      `${counts.blocked_by_budget} item${counts.blocked_by_budget === 1 ? '' : 's'} will not fit in what is left of budget_usd ($${formatUsd(budgetLeft ?? 0)}): raise budget_usd to submit them`,
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

/** The same "expires within 6 hours" warnings as status, from the status report itself. */
function expiringOutputs(manifest: Manifest, source: PlanSource, nowMs: number): string[] {
  const money = { chargedMicros: 0, refundedMicros: 0, reservedMicros: 0 };
  return buildStatus({ ...manifest, items: [] }, { summaries: [], money, unsaved: source.unsaved }, nowMs)
    .warnings;
}

function blockedReason(need: Micros | null, left: Micros, reserved: Micros): string {
  const shortBy =
    need === null
      ? 'nothing is left'
      : `needs $${formatUsd(need)} but $${formatUsd(Math.max(0, left))} is left`;
  // run waits for unanswered attempts before giving up on an item, so say what may still free up.
  const pending = reserved > 0 ? `; $${formatUsd(reserved)} reserved by unanswered attempts may free up` : '';
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
        `the balance $${account.balance.amount_usd} is below the estimate $${formatUsd(estimate)} for the items to submit: some would be refused (402 insufficient_balance)`,
      );
    } else if (balance === 0) {
      warnings.push('the balance is $0.000000: every submission would be refused (402 insufficient_balance)');
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
