import { ApiError } from '../errors.js';
import type { AttemptRecord } from '../ledger/index.js';
import type { RunContext } from './run-context.js';

/**
 * A copied take whose file is gone or altered (docs/results.md, "The record of a result"). It
 * points at its result, so it is had again for free, never bought: while another item of this run
 * fetches that result's job again, it waits and copies that take; else, while the service holds
 * the result's job, its outputs are fetched into the copy's own place; else an intact take of its
 * request saved anywhere in the batch is copied at the run's end. Only where none of these is left
 * is it expired (and only `regenerateExpired` pays for it again).
 */
export async function recoverLostCopy(
  run: RunContext,
  copy: AttemptRecord,
  /** Jobs this run fetches again for their own items. */
  fetching: ReadonlySet<string>,
): Promise<void> {
  const tracked = run.state.item(copy.itemId);
  const job = copy.madeByJob ?? null;
  if (tracked === undefined) return;
  if (job !== null && !fetching.has(job) && held(run, copy)) {
    const fetched = await run.deps.client.getJob(job).then(
      (answer) => answer.data,
      (error: unknown) => {
        if (!(error instanceof ApiError)) throw error;
        return null; // the service no longer knows it: an intact take may still answer
      },
    );
    if (fetched?.status === 'succeeded' && fetched.output.files.length > 0) {
      run.deps.observer.log(
        'info',
        `${copy.itemId}: fetching the result it copies again from job ${job} (free)`,
      );
      run.downloads.add({ attempt: copy, job: fetched });
      return;
    }
  }
  run.awaitTwin(tracked.item, true);
}

/** Whether the service still holds the result's outputs, by its word (unknown counts as held). */
function held(run: RunContext, copy: AttemptRecord): boolean {
  return copy.expiresAt === null || Date.parse(copy.expiresAt) > run.deps.clock.now();
}

/**
 * A lost copy with nothing left to copy or fetch: expired, and the next run looks for an intact
 * take of its request again (only `regenerateExpired` pays for it where none is left).
 */
export function copyLeftExpired(run: RunContext, itemId: string): void {
  run.setItem(itemId, 'expired', {
    errorCode: null,
    errorMessage:
      'its saved file, a copy of an earlier take, was deleted or altered after saving, and no intact take of its request is left',
  });
}
