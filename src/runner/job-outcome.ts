import type { AttemptRecord } from '../ledger/index.js';
import type { Job } from '../service-client/schemas.js';
import type { DownloadOutcome, DownloadTask } from './download-queue.js';
import { takeFailedCheck } from './failed-take.js';
import { CONTENT_REJECTED } from './fallback.js';
import { rejectedJob } from './fallback-steps.js';
import { failureCode } from './job-snapshot.js';
import { pollsFor } from './look-limits.js';
import { decideJobFailure } from './policy.js';
import type { RunContext } from './run-context.js';

/** Acts on the latest known state of an accepted job: watch it, save it, or decide its item. */
export function handleJob(
  run: RunContext,
  attempt: AttemptRecord,
  job: Job,
  retryAfterSeconds: number | null = null,
): void {
  run.state.learnRetryAfter(retryAfterSeconds);
  const tracked = run.state.item(attempt.itemId);
  if (!tracked) return;
  if (job.status === 'queued' || job.status === 'running') {
    const known = run.state.watched(job.id) !== undefined;
    run.state.watch(job.id, attempt, run.deps.clock.now(), job.created_at);
    // A job adopted outside a POST (a resumed or reconciled attempt) must start the poll timer now,
    // not after whatever the loop is sleeping on.
    if (!known) run.wake();
    return;
  }
  jobEnded(run, job);
  if (attempt.requestHash !== tracked.hash) {
    // Resolved an attempt from before the manifest changed: its result answers an old request.
    // A video it made was paid for: it is saved as that take, and the edit becomes the next take.
    if (job.status === 'succeeded' && job.output.files.length > 0) {
      run.state.redo(attempt.itemId);
      run.downloads.add({ attempt, job, superseded: true });
    }
    run.enqueue(attempt.itemId);
    return;
  }
  if (job.status === 'succeeded') {
    if (job.completed_at !== null)
      run.state.jobSucceeded(Date.parse(job.completed_at) - Date.parse(job.created_at));
    run.downloads.add({ attempt, job });
    return;
  }
  jobFailed(run, attempt, job);
}

/** A followed job is final: no longer watched, and what a per-job poller would have polled it counts. */
function jobEnded(run: RunContext, job: Job): void {
  const watched = run.state.watched(job.id);
  run.state.unwatch(job.id);
  if (!watched) return;
  const took =
    job.completed_at === null ? Number.NaN : Date.parse(job.completed_at) - Date.parse(job.created_at);
  const now = run.deps.clock.now();
  const durationMs = Number.isFinite(took) ? took : now - watched.acceptedAt;
  run.state.budget.jobEnded(pollsFor(durationMs, run.pollIntervalMs));
}

function jobFailed(run: RunContext, attempt: AttemptRecord, job: Job): void {
  const { retriesUsed } = run.state.item(attempt.itemId)!.record;
  const code = failureCode(job);
  // Moderation judged this prompt: the item's next one goes out, if it lists one (fallback.ts).
  if (code === CONTENT_REJECTED && rejectedJob(run, attempt, job)) return;
  const decision = decideJobFailure(
    code,
    retriesUsed,
    run.deps.manifest.retries,
    run.options.modelBusyDelayMs,
  );
  if (decision.kind === 'resubmit') {
    run.setItem(attempt.itemId, 'pending', { retriesUsed: retriesUsed + 1, errorCode: code });
    run.enqueue(attempt.itemId, run.deps.clock.now() + decision.delayMs);
    return;
  }
  const message =
    decision.code === 'retries_exhausted'
      ? `gave up after ${retriesUsed + 1} attempts; last failure ${code}: ${job.error?.message ?? ''}`
      : (job.error?.message ?? job.status);
  run.setItem(attempt.itemId, 'failed', { errorCode: decision.code, errorMessage: message });
}

/** An item's files are all saved, or its outputs are gone, or saving them failed for now. */
export async function downloadFinished(
  run: RunContext,
  task: DownloadTask,
  outcome: DownloadOutcome,
): Promise<void> {
  const itemId = task.attempt.itemId;
  if (typeof outcome === 'object' && 'checksFailed' in outcome) {
    takeFailedCheck(run, task, outcome.checksFailed);
    return;
  }
  if (task.superseded) {
    supersededSaved(run, task, outcome);
    return;
  }
  // Its `done` was committed with its files (DownloadQueue): memory and the observer follow.
  if (outcome === 'saved') run.setItem(itemId, 'done', {}, { recorded: true });
  else if (outcome === 'expired') {
    const words = await expiredWords(run, task.attempt);
    const tracked = run.state.item(itemId);
    if (task.attempt.filesSaved && tracked !== undefined) {
      // Saved, then lost on the disk past retention: an intact take of its request elsewhere in
      // the batch (a twin's copy) answers it for free at the run's end, before anything is paid.
      run.awaitTwin(tracked.item, true, words);
    } else if (run.options.regenerateExpired && !run.state.stop) {
      run.deps.observer.log('info', `${itemId}: ${words}; generating it again (\`regenerateExpired\`)`);
      run.enqueue(itemId);
    } else run.setItem(itemId, 'expired', { errorCode: 'expired', errorMessage: words });
  } else {
    run.deps.observer.log('error', `${itemId}: files not saved: ${outcome.error}; re-run to retry`);
  }
  run.wake();
}

/**
 * Why an item has no output: never saved before the service deleted it, or saved, then deleted
 * from the disk (or altered) and fetched again too late (verify-saved.ts): the two are told apart,
 * since only the first is a run that came too late.
 */
async function expiredWords(run: RunContext, attempt: AttemptRecord): Promise<string> {
  if (!attempt.filesSaved) return 'outputs were deleted before they were saved';
  const savedAt = await run.deps.ledger.savedAt(attempt.id);
  const unfit = run.state.unfitSaved(attempt.itemId);
  const what = unfit === 'altered' ? 'altered on the disk' : 'deleted from the disk';
  return `saved${savedAt === null ? '' : ` on ${savedAt}`}, then ${what}; the service no longer holds it`;
}

/** A take made before its item was edited: its files are kept or not; the item goes its own way. */
function supersededSaved(
  run: RunContext,
  task: DownloadTask,
  outcome: Exclude<DownloadOutcome, { checksFailed: unknown }>,
): void {
  const { itemId, take } = task.attempt;
  const what = `${itemId}: the job ${task.job.id} of its request before the edit`;
  if (outcome === 'saved') run.deps.observer.log('info', `${what} is saved as take ${take ?? 1}`);
  else if (outcome === 'expired') run.deps.observer.log('warn', `${what} has no outputs left to save`);
  else run.deps.observer.log('error', `${what} was not saved: ${outcome.error}; re-run to retry`);
  run.wake();
}
