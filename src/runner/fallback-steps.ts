import type { AttemptRecord, ItemRecord } from '../ledger/index.js';
import type { Job } from '../service-client/schemas.js';
import {
  ALL_REJECTED_FIX,
  ALL_REJECTED_WORDS,
  CONTENT_REJECTED,
  promptWords,
  Rejections,
  rejectionsOf,
} from './fallback.js';
import { manifestVariants, variantOfItem } from './request-key.js';
import type { RunContext } from './run-context.js';

/**
 * The run's side of fallbacks past moderation (fallback.ts holds the rules): the rejections read
 * at its start, the next prompt sent after a rejection, and an item none of whose prompts is left.
 */

/**
 * Reads the batch's rejected requests into the run. Items sent again on purpose are held only to
 * this run's rejections: those `redo` names, and with `retryFailed` every failed item.
 */
export async function readRejections(
  run: RunContext,
  records: ReadonlyMap<string, ItemRecord>,
): Promise<void> {
  const variants = manifestVariants(run.deps.manifest.items);
  const rejected = rejectionsOf(await run.deps.ledger.rejectedAttempts(), (id) =>
    variantOfItem(variants, id),
  );
  const asked = new Set(run.options.redo ?? []);
  if (run.options.retryFailed)
    for (const record of records.values()) if (record.state === 'failed') asked.add(record.itemId);
  run.rejections = new Rejections(rejected, asked);
}

/**
 * A job moderation rejected: its request is never sent again in this batch, and its item sends its
 * next prompt (a new request under a new key), or fails `content_rejected` when none is left.
 * Says whether the item goes on.
 */
export function rejectedJob(run: RunContext, attempt: AttemptRecord, job: Job): boolean {
  const tracked = run.state.item(attempt.itemId)!;
  const failed = { ...attempt, errorMessage: job.error?.message ?? null, jobId: job.id };
  const [rejection] = rejectionsOf([failed], () => tracked.item.variant?.number ?? 1);
  if (rejection) run.rejections.add({ ...rejection, at: job.completed_at });
  const next = run.rejections.next(tracked.item);
  if (next === null) return false;
  run.deps.observer.log(
    'info',
    `${attempt.itemId}: moderation rejected its request (${job.error?.message ?? CONTENT_REJECTED}); sending ${promptWords(next)}`,
  );
  run.setItem(attempt.itemId, 'pending', { errorCode: null, errorMessage: null });
  run.enqueue(attempt.itemId);
  return true;
}

/**
 * An item every prompt of which moderation has rejected, found before it is sent: it fails as its
 * rejected job would have, with the service's message, and nothing is sent.
 */
export function noPromptLeft(run: RunContext, itemId: string): void {
  const tracked = run.state.item(itemId)!;
  // An item sent only on request has no row yet in this run (unsent-items.ts): it is written now.
  if (run.state.unsent.release(itemId)) run.background(run.deps.ledger.putItems([tracked.record]));
  const last = run.rejections.lastOf(tracked.item);
  run.deps.observer.log('warn', `${itemId}: not sent: ${ALL_REJECTED_WORDS}: ${ALL_REJECTED_FIX}`);
  run.setItem(itemId, 'failed', {
    errorCode: CONTENT_REJECTED,
    errorMessage: `${ALL_REJECTED_WORDS}${last?.message ? `: ${last.message}` : ''}`,
  });
}
