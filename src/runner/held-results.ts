import type { AttemptRecord, ReusableTake } from '../ledger/index.js';
import type { ManifestItem } from '../manifest/index.js';
import type { Job } from '../service-client/schemas.js';
import { copyRecord } from './reuse-takes.js';
import type { RunContext } from './run-context.js';
import { isJobUnknown } from './watch.js';

/**
 * A request whose saved takes are all lost (deleted or altered) while the service still holds a
 * job of it (docs/results.md, "A result is found by its request"): an undone edit whose first
 * take was altered, say. It was paid for once; the run acquires it again by fetching that job's
 * outputs (a GET, free) into a new take of the item, never by sending it again. Which take's job
 * holds it is heldResultOf (take-index.ts), by which `plan` says the same (plan-reuses.ts).
 */

/**
 * The items among `itemIds` (to submit, not waiting for a twin, not held back) whose request a
 * held job answers (`held`, from reuseSavedTakes): each gets a new take fetched from that job
 * instead of a POST. Returns those it fetches, and those left unsent because the service did not
 * answer (a re-run tries again); an item whose job the service no longer has goes out as before.
 */
export async function fetchHeldResults(
  run: RunContext,
  itemIds: readonly string[],
  held: ReadonlyMap<string, ReusableTake>,
  latest: ReadonlyMap<string, AttemptRecord>,
): Promise<Set<string>> {
  const taken = new Set<string>();
  for (const id of itemIds) {
    const result = held.get(id);
    const tracked = run.state.item(id);
    if (result === undefined || tracked === undefined) continue;
    const job = await heldJob(run, id, result.jobId!);
    if (job === 'gone') continue;
    taken.add(id);
    if (job !== 'unanswered') await fetchInto(run, tracked.item, result, job, latest.get(id));
  }
  return taken;
}

/** The job as the service has it now: its outputs, `gone` when it has none, or no answer. */
async function heldJob(run: RunContext, itemId: string, jobId: string): Promise<Job | 'gone' | 'unanswered'> {
  try {
    const { data } = await run.deps.client.getJob(jobId);
    return data.status === 'succeeded' && data.output.files.length > 0 ? data : 'gone';
  } catch (error) {
    if (isJobUnknown(error)) return 'gone';
    run.deps.observer.log(
      'warn',
      `${itemId}: could not fetch job ${jobId}, which holds its request's output: ${(error as Error).message}; nothing sent for it, re-run to retry`,
    );
    return 'unanswered';
  }
}

/** The new take recorded (the item in flight), then the job's outputs saved into it like any download. */
async function fetchInto(
  run: RunContext,
  item: ManifestItem,
  result: ReusableTake,
  job: Job,
  latest: AttemptRecord | undefined,
): Promise<void> {
  const { ledger, observer } = run.deps;
  const seq = (latest?.seq ?? 0) + 1;
  // Its own take number, after every take of the item (a take's number only grows with its attempts).
  const take = latest === undefined ? 1 : (latest.take ?? 1) + 1;
  const attempt = await ledger.recordTakeToFetch(copyRecord(run, item, { seq, take }, result));
  // The ledger's row is written with it, in flight (an item sent only on request is held no more).
  run.state.unsent.release(item.id);
  run.state.cancelRedo(item.id);
  run.state.attemptPrepared(attempt);
  observer.itemChanged(item.id, 'in_flight', null, run.state.countByState());
  observer.log(
    'info',
    `${item.id}: no saved take of its request is intact, and the service still holds job ${result.jobId} (take ${result.take} of ${result.itemId}): fetching its output again as take ${take}, nothing to pay`,
  );
  run.downloads.add({ attempt, job });
}
