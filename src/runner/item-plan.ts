import { type AttemptRecord, type ItemRecord, LOST_JOB_STATUS } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import { CONTENT_REJECTED } from './fallback.js';
import { isRetryableOnRerun, mayRetryFailed } from './policy.js';
import { requestHash, sameApartFromCap } from './request.js';

/**
 * What a run will do with one item, decided from the manifest's request hash and the ledger alone.
 * `plan` prints these labels; `run` acts on them.
 */
export type ItemPlan =
  | { label: 'new'; action: 'submit' }
  | { label: 'changed'; action: 'submit' }
  | { label: 'retry'; action: 'submit'; reason: string }
  | { label: 'in_flight'; action: 'resume'; attempt: AttemptRecord }
  | { label: 'done'; action: 'verify'; attempt: AttemptRecord }
  | { label: 'expired'; action: 'skip' | 'submit' }
  | { label: 'failed'; action: 'skip'; code: string | null };

/** The hash an item is planned with, and whether it is its record's although max_cost_usd changed. */
export interface CurrentRequest {
  hash: string;
  capOnly: boolean;
}

/** An attempt's recorded request, read whole only when a hash differs (plan streams it blank). */
export type RecordedRequest = (attempt: AttemptRecord) => Pick<AttemptRecord, 'requestBody' | 'requestHash'>;

/**
 * The one rule, for `run` (restore.ts) and `plan` (plan-decisions.ts), of which hash an item is
 * planned with: the manifest's (requestHash), unless the item is done or in flight and its latest
 * attempt, sent for the recorded request, asked for the same video apart from max_cost_usd. Then
 * the cap alone changed, which is no new request: the item keeps its record's hash, so it is not
 * submitted and its job is followed as before. An attempt sent later anyway (`--redo`, a retry of
 * a failed job) sends the new cap, and it and the item's row take the new hash (submit.ts). Items
 * with no job answering them (pending, failed, over budget, expired) go out with the new cap as
 * any edit does. Only an item whose hash differs reads its attempt's body.
 */
export function currentRequest(
  item: ManifestItem,
  record: ItemRecord | undefined,
  latest: AttemptRecord | undefined,
  recorded: RecordedRequest,
  /** The item's requestHash, when the caller has it already. */
  hash = requestHash(item),
): CurrentRequest {
  if (record === undefined || !readsRecordedRequest(hash, record, latest)) return { hash, capOnly: false };
  const sent = recorded(latest);
  const same = sent.requestHash === record.requestHash && sameApartFromCap(sent.requestBody, item);
  return same ? { hash: record.requestHash, capOnly: true } : { hash, capOnly: false };
}

/**
 * Whether currentRequest reads the latest attempt's recorded request: the item's hash differs from
 * its record's, and a job answers (or may answer) the recorded one. A streamed plan reads those
 * bodies, and only those, before deciding (plan-report.ts).
 */
export function readsRecordedRequest(
  hash: string,
  record: ItemRecord | undefined,
  latest: AttemptRecord | undefined,
): latest is AttemptRecord {
  if (record === undefined || latest === undefined) return false;
  const answered =
    (record.state === 'done' || record.state === 'in_flight') &&
    (latest.state === 'accepted' || latest.state === 'prepared') &&
    latest.jobStatus !== LOST_JOB_STATUS;
  return answered && record.requestHash !== hash;
}

export function planItem(
  hash: string,
  record: ItemRecord | undefined,
  latest: AttemptRecord | undefined,
  options: {
    regenerateExpired: boolean;
    retryFailed?: boolean;
    /**
     * The item's record was settled during this run, by another runner of the batch (an item
     * adopted): its failure is final for this run, as it is for the runner that failed it. Only a
     * later run tries it again.
     */
    sameRun?: boolean;
    /**
     * Whether the item has a prompt whose request moderation has not rejected (fallback.ts): asked
     * only of an item that failed `content_rejected`, since making the keys costs a hash a prompt.
     */
    promptLeft?: () => boolean;
    /**
     * Whether a checks_failed item's failed takes are within its `rerolls` (rerolls-due.ts): `plan`
     * asks, so it says the re-roll a run owes; `run` decides it before (restore.ts, rerollsNow).
     */
    rerollOwed?: () => boolean;
  },
): ItemPlan {
  // An unanswered attempt is resolved first with its own key and body, even if the item changed.
  if (latest?.state === 'prepared') return { label: 'in_flight', action: 'resume', attempt: latest };
  if (!record) return { label: 'new', action: 'submit' };
  if (record.requestHash !== hash) return { label: 'changed', action: 'submit' };
  switch (record.state) {
    case 'pending':
      // `mediabatch forget`: the service lost the job, which was paid; this submission pays again.
      if (latest?.jobStatus === LOST_JOB_STATUS)
        return { label: 'retry', action: 'submit', reason: 'job_lost' };
      return latest
        ? { label: 'retry', action: 'submit', reason: 'interrupted' }
        : { label: 'new', action: 'submit' };
    case 'in_flight':
      if (latest?.state === 'accepted') return { label: 'in_flight', action: 'resume', attempt: latest };
      // A run killed between recording a 409 and failing the item: never a new key blindly.
      if (latest?.state === 'rejected' && latest.httpStatus === 409)
        return { label: 'failed', action: 'skip', code: latest.httpCode ?? 'idempotency_key_reused' };
      return { label: 'retry', action: 'submit', reason: 'interrupted' };
    case 'done':
      return latest
        ? { label: 'done', action: 'verify', attempt: latest }
        : { label: 'new', action: 'submit' };
    case 'budget_exceeded':
      return { label: 'retry', action: 'submit', reason: 'budget_exceeded' };
    case 'expired':
      return { label: 'expired', action: options.regenerateExpired ? 'submit' : 'skip' };
    case 'checks_failed':
      if (options.rerollOwed?.()) return { label: 'retry', action: 'submit', reason: 'reroll' };
      // Every take it was allowed was paid for and kept: only a redo buys another (docs/checks.md).
      return { label: 'failed', action: 'skip', code: record.errorCode ?? 'checks_failed' };
    case 'failed':
      if (options.sameRun) return { label: 'failed', action: 'skip', code: record.errorCode };
      if (isRetryableOnRerun(record.errorCode))
        return { label: 'retry', action: 'submit', reason: record.errorCode ?? 'failed' };
      // --retry-failed: a final failure goes out again on purpose, with a new key and fresh retries.
      if (options.retryFailed && mayRetryFailed(record.errorCode))
        return { label: 'retry', action: 'submit', reason: `retry_failed: ${record.errorCode}` };
      // A fallback prompt listed since, or one no item has sent yet: a new request, not a retry.
      if (record.errorCode === CONTENT_REJECTED && options.promptLeft?.())
        return { label: 'retry', action: 'submit', reason: 'fallback' };
      return { label: 'failed', action: 'skip', code: record.errorCode };
  }
}

/**
 * Resubmissions an item brings into a run that submits it. One a killed run left mid-way keeps
 * its count, so a crash cannot hand it a fresh set of `retries`; one that reached a final state
 * (a later run retries it) or whose request changed starts afresh.
 */
export function retriesCarried(plan: ItemPlan, record: ItemRecord | undefined): number {
  return plan.label === 'retry' && plan.reason === 'interrupted' ? (record?.retriesUsed ?? 0) : 0;
}

/** The latest attempt of every item, by item id. */
export function latestAttempts(attempts: readonly AttemptRecord[]): Map<string, AttemptRecord> {
  const latest = new Map<string, AttemptRecord>();
  for (const attempt of attempts) {
    const seen = latest.get(attempt.itemId);
    if (!seen || attempt.seq > seen.seq) latest.set(attempt.itemId, attempt);
  }
  return latest;
}

/**
 * What the latest attempt of an item whose request changed (it answers the request before the
 * edit) still holds that was paid for. `preserve`: its saved files, so the edited item's next
 * attempt starts a new take and the earlier take is preserved beside it, as `run --redo` does.
 * `watch`: a job still running, followed to its end. `fetch`: a job that succeeded but was never
 * saved, fetched again. `nothing`: no output exists or ever will (failed, refused, or not edited).
 */
export function earlierOutput(
  hash: string,
  latest: AttemptRecord | undefined,
): 'preserve' | 'watch' | 'fetch' | 'nothing' {
  if (latest === undefined || latest.requestHash === hash || latest.state !== 'accepted') return 'nothing';
  if (latest.filesSaved) return 'preserve';
  if (latest.jobStatus === 'queued' || latest.jobStatus === 'running') return 'watch';
  return latest.jobStatus === 'succeeded' ? 'fetch' : 'nothing';
}
