import type { ItemEntry } from '../ledger/item-entries.js';
import type { AttemptRecord, ItemRecord } from '../ledger/records.js';
import type { ManifestItem } from '../manifest/index.js';
import { currentRequest, planItem, type RecordedRequest } from '../runner/item-plan.js';

/**
 * What `plan` says run would do with one item, before the budget walk: runner's planItem
 * decision, in the words plan prints. Pure.
 */

export type PlanLabel =
  | 'new'
  | 'changed'
  | 'in_flight'
  | 'done'
  | 'retry'
  | 'redo'
  | 'renamed'
  | 'expired'
  | 'failed'
  | 'blocked_by_budget';

export const PLAN_LABELS: readonly PlanLabel[] = [
  'new',
  'changed',
  'in_flight',
  'done',
  'retry',
  'redo',
  'renamed',
  'expired',
  'failed',
  'blocked_by_budget',
];

export interface Decision {
  label: Exclude<PlanLabel, 'blocked_by_budget'>;
  /** Whether run would submit it (and so reserve and spend for it). */
  submit: boolean;
  reason?: string;
  /** A changed item's latest attempt, whose request names the fields that changed. */
  changedSince?: AttemptRecord | undefined;
  /** A renamed item: the removed id whose paid result it takes (plan-renames.ts). */
  renamedFrom?: string;
  /** Its last job was paid for and lost by the service (`mediabatch forget`): it is paid for again. */
  paysAgain?: boolean;
}

/** What the run is asked besides the manifest: the flags that change what it submits. */
export interface DecideOptions {
  regenerateExpired: boolean;
  /** `run --retry-failed`. */
  retryFailed?: boolean;
  /** `run --redo`: done items that get a new take. */
  redo?: ReadonlySet<string>;
}

// Shared: at 100,000 items most decisions are one of these, and need no object of their own.
const NEW: Decision = { label: 'new', submit: true };
const DONE: Decision = { label: 'done', submit: false };

/** Why a done or in-flight item whose max_cost_usd alone changed is not sent (item-plan.ts). */
const CAP_ONLY_WORDS = 'only max_cost_usd changed: the same video, not paid for again';

/**
 * An item the ledger does not know (no entry) is new whatever it holds: it is not even hashed.
 * `recorded` reads the latest attempt whole, for an item whose hash differs from its record's.
 */
export function decideItem(
  item: ManifestItem,
  entry: ItemEntry | undefined,
  options: DecideOptions,
  recorded: RecordedRequest,
): Decision {
  if (entry === undefined) return NEW;
  const record = entry.record;
  const { hash, capOnly } = currentRequest(item, record, entry.attempt, recorded);
  const decided = planItem(hash, record, entry.attempt, options);
  const submit = decided.action === 'submit';
  switch (decided.label) {
    case 'new':
      return NEW;
    case 'done':
      return options.redo?.has(item.id)
        ? {
            label: 'redo',
            submit: true,
            reason: `--redo: a new take; the current one is kept as a take file${capOnly ? '; sent with the new max_cost_usd' : ''}`,
          }
        : capOnly
          ? { label: 'done', submit: false, reason: CAP_ONLY_WORDS }
          : DONE;
    case 'changed':
      return { label: 'changed', submit, changedSince: entry.attempt };
    case 'retry':
      return decided.reason === 'job_lost'
        ? { label: 'retry', submit, paysAgain: true, reason: lostReason(entry.attempt) }
        : { label: 'retry', submit, reason: retryReason(decided.reason, record) };
    case 'in_flight':
      return {
        label: 'in_flight',
        submit,
        reason: `${inFlightReason(decided.attempt)}${capOnly ? `; ${CAP_ONLY_WORDS}` : ''}`,
      };
    case 'expired':
      return {
        label: 'expired',
        submit,
        reason: submit
          ? 'outputs were deleted before they were saved: generated and paid for again'
          : 'outputs were deleted before they were saved; run --regenerate-expired pays for them again',
      };
    case 'failed':
      return {
        label: 'failed',
        submit,
        reason: `${record?.errorCode ?? 'failed'}${record?.errorMessage ? `: ${record.errorMessage}` : ''} (skipped)`,
      };
  }
}

function inFlightReason(attempt: AttemptRecord): string {
  return attempt.state === 'prepared'
    ? `attempt ${attempt.seq} has no recorded answer: resent with its own key and body`
    : `job ${attempt.jobId} ${attempt.jobStatus ?? 'accepted'}: watched and downloaded`;
}

function lostReason(attempt: AttemptRecord | undefined): string {
  return `the service lost job ${attempt?.jobId ?? '?'} (mediabatch forget): paid for again`;
}

function retryReason(reason: string, record: ItemRecord | undefined): string {
  if (reason === 'interrupted') return 'an earlier run stopped before this item was answered';
  if (reason === 'budget_exceeded') return 'did not fit in budget_usd last time';
  if (reason.startsWith('retry_failed'))
    return `--retry-failed: failed with ${record?.errorCode ?? 'an error'}; sent again with a new key`;
  const message = record?.errorMessage ? `: ${record.errorMessage}` : '';
  return `last attempt ended with ${reason}${message}; a re-run tries again with a new key`;
}
