import {
  deletedAfterSaving,
  type FileProblems,
  type ItemFiles,
  needsFetching,
  remedy,
  stillHeld,
} from '../../documents/file-problems.js';
import { type OnRequest, onRequestOf } from '../../documents/on-request.js';
import { type AttemptRecord, type ItemEntry, type ItemRecord, jobOfBytes } from '../../ledger/index.js';
import type { ManifestItem } from '../../manifest/index.js';
import { CAP_ONLY_WORDS } from '../../runner/budget-words.js';
import { ALL_REJECTED_WORDS, type NextPrompt, promptWords, type Rejections } from '../../runner/fallback.js';
import { currentRequest, planItem, type RecordedRequest } from '../../runner/item-plan.js';
import { mayReroll, rerollWords } from '../../runner/reroll.js';
import type { FailedTakesOf } from '../../runner/rerolls-due.js';

/**
 * What `plan` says run would do with one item, before the budget walk: runner's planItem
 * decision, in the words plan prints. Pure.
 */

export type PlanLabel =
  | 'new'
  | 'changed'
  | 'in_flight'
  | 'done'
  | 'refetch'
  | 'retry'
  | 'redo'
  | 'renamed'
  | 'reused'
  | 'expired'
  | 'failed'
  | 'held_back'
  | 'blocked_by_budget';

export const PLAN_LABELS: readonly PlanLabel[] = [
  'new',
  'changed',
  'in_flight',
  'done',
  'refetch',
  'retry',
  'redo',
  'renamed',
  'reused',
  'expired',
  'failed',
  'held_back',
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
  /** A reused item: the saved take of its very request that run copies into its place (plan-reuses.ts). */
  reusedFrom?: { item: string; take: number | null };
  /** Its last job was paid for and lost by the service (`mediabatch forget`): it is paid for again. */
  paysAgain?: boolean;
  /** Only this option of run sends it again (on-request.ts). */
  onRequest?: OnRequest;
  /** A re-roll of a take that failed its check: a new take, as a redo is, never a copy of that take. */
  reroll?: true;
}

/** What the run is asked besides the manifest: the flags that change what it submits. */
export interface DecideOptions {
  regenerateExpired: boolean;
  /** `run --retry-failed`. */
  retryFailed?: boolean;
  /** `run --redo`: done items that get a new take. */
  redo?: ReadonlySet<string>;
  /** Items whose saved files are not as saved (file-problems.ts), and the time to judge expiry by. */
  files?: FileProblems;
  nowMs?: number;
  /** The requests moderation rejected (runner/fallback.ts): past them an item sends a fallback prompt. */
  rejections?: Rejections;
  /** The ledger's failed takes per item and request (runner/rerolls-due.ts): the re-rolls a run owes. */
  failedTakes?: FailedTakesOf;
}

// Shared: at 100,000 items most decisions are one of these, and need no object of their own.
const NEW: Decision = { label: 'new', submit: true };
const DONE: Decision = { label: 'done', submit: false };

/**
 * An item the ledger does not know (no entry) is new whatever it holds: it is not even hashed.
 * `recorded` reads the latest attempt whole, for an item whose hash differs from its record's.
 */
export function decideItem(
  item: ManifestItem,
  entry: ItemEntry | undefined,
  options: DecideOptions,
  recorded: RecordedRequest,
  /** The item's requestHash, when the caller has it already. */
  itemHash?: string,
): Decision {
  const decision = decideOwn(item, entry, options, recorded, itemHash);
  const { rejections } = options;
  if (!decision.submit || rejections === undefined || rejections.empty) return decision;
  // Sent again on purpose, as run decides (fallback-steps.ts): its own prompt first, whatever was rejected.
  const asked = options.redo?.has(item.id) || (options.retryFailed && entry?.record?.state === 'failed');
  return asked ? decision : fallbackDecision(decision, rejections.next(item));
}

/** What an item sends past the prompts moderation rejected: a fallback, or nothing at all. */
function fallbackDecision(decision: Decision, next: NextPrompt | null): Decision {
  if (next === null)
    return { label: 'failed', submit: false, reason: `content_rejected: ${ALL_REJECTED_WORDS}: not sent` };
  if (next.number === 1) return decision;
  const sends = `sends ${promptWords(next)}: moderation rejected the request of each prompt before it`;
  return { ...decision, reason: decision.reason ? `${decision.reason}; ${sends}` : sends };
}

function decideOwn(
  item: ManifestItem,
  entry: ItemEntry | undefined,
  options: DecideOptions,
  recorded: RecordedRequest,
  itemHash?: string,
): Decision {
  if (entry === undefined) return NEW;
  const record = entry.record;
  const { hash, capOnly } = currentRequest(item, record, entry.attempt, recorded, itemHash);
  const { rejections } = options;
  const failedOf = () => options.failedTakes?.(item.id, hash) ?? 0;
  const decided = planItem(hash, record, entry.attempt, {
    ...options,
    promptLeft: () => rejections?.fallbackLeft(item) ?? false,
    rerollOwed: () => mayReroll(failedOf(), item.rerolls ?? 0),
  });
  const submit = decided.action === 'submit';
  switch (decided.label) {
    case 'new':
      return NEW;
    case 'done':
      if (options.redo?.has(item.id))
        return {
          label: 'redo',
          submit: true,
          reason: `\`redo\`: a new take; the current one is preserved as a take file${capOnly ? '; sent with the new max_cost_usd' : ''}`,
        };
      return (
        savedFilesDecision(options.files?.get(item.id), options) ??
        (capOnly ? { label: 'done', submit: false, reason: CAP_ONLY_WORDS } : DONE)
      );
    case 'changed':
      return { label: 'changed', submit, changedSince: entry.attempt };
    case 'retry':
      return decided.reason === 'job_lost'
        ? { label: 'retry', submit, paysAgain: true, reason: lostReason(entry.attempt) }
        : decided.reason === 'reroll'
          ? {
              label: 'retry',
              submit,
              reroll: true,
              reason: rerollReason(failedOf(), item.rerolls ?? 0, record),
            }
          : { label: 'retry', submit, reason: retryReason(decided.reason, record) };
    case 'in_flight':
      return {
        label: 'in_flight',
        submit,
        reason: `${inFlightReason(decided.attempt)}${capOnly ? `; ${CAP_ONLY_WORDS}` : ''}`,
      };
    case 'expired':
      return expiredDecision(
        submit,
        // Saved, then deleted and fetched too late: the run recorded which, and when it was saved.
        entry.attempt?.filesSaved ? (record?.errorMessage ?? null) : null,
      );
    case 'failed': {
      const onRequest = onRequestOf('failed', record?.errorCode ?? null);
      return {
        label: 'failed',
        submit,
        reason: `${record?.errorCode ?? 'failed'}${record?.errorMessage ? `: ${record.errorMessage}` : ''} (skipped)`,
        ...(onRequest ? { onRequest } : {}),
      };
    }
  }
}

function inFlightReason(attempt: AttemptRecord): string {
  return attempt.state === 'prepared'
    ? `attempt ${attempt.seq} has no recorded answer: resent with its own key and body`
    : `job ${jobOfBytes(attempt)} ${attempt.jobStatus ?? 'accepted'}: watched and downloaded`;
}

/**
 * A done item whose saved file is gone or holds other bytes: run fetches it again for free while
 * the service holds its output (a GET, never a POST); after that it is expired, and only
 * --regenerate-expired pays for it again. A file only modified since (same size) stays done.
 */
function savedFilesDecision(files: ItemFiles | undefined, options: DecideOptions): Decision | null {
  if (files === undefined) return null;
  const now = options.nowMs ?? Date.now();
  if (!needsFetching(files)) return { label: 'done', submit: false, reason: remedy(files, now) };
  if (stillHeld(files, now)) return { label: 'refetch', submit: false, reason: remedy(files, now) };
  return expiredDecision(options.regenerateExpired, deletedAfterSaving(files));
}

function expiredDecision(submit: boolean, afterSaving: string | null): Decision {
  const what = afterSaving ?? 'outputs were deleted before they were saved';
  const them = afterSaving === null ? 'them' : 'it';
  return {
    label: 'expired',
    submit,
    ...(submit ? {} : { onRequest: 'regenerateExpired' as const }),
    reason: submit
      ? `${what}: generated and paid for again`
      : `${what}; run \`regenerateExpired\` pays for ${them} again`,
  };
}

function lostReason(attempt: AttemptRecord | undefined): string {
  return `the service lost job ${attempt?.jobId ?? '?'} (mediabatch forget): paid for again`;
}

/** A checks_failed item bought again: what failed, and which re-roll this is. */
function rerollReason(failed: number, rerolls: number, record: ItemRecord | undefined): string {
  const why = record?.errorMessage ? `: ${record.errorMessage}` : '';
  return `its take failed its check${why}; bought again as a new take (${rerollWords(failed, rerolls)})`;
}

function retryReason(reason: string, record: ItemRecord | undefined): string {
  if (reason === 'interrupted') return 'an earlier run stopped before this item was answered';
  if (reason === 'budget_exceeded') return 'did not fit in budget_usd last time';
  if (reason === 'fallback') return 'moderation rejected its last request (content_rejected)';
  if (reason.startsWith('retry_failed'))
    return `\`retryFailed\`: failed with ${record?.errorCode ?? 'an error'}; sent again with a new key`;
  const message = record?.errorMessage ? `: ${record.errorMessage}` : '';
  return `last attempt ended with ${reason}${message}; a re-run tries again with a new key`;
}
