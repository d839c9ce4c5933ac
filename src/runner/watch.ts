import { ApiError } from '../api/errors.js';
import type { Job } from '../api/schemas.js';
import type { AttemptRecord } from '../ledger/records.js';
import { handleJob } from './job-outcome.js';
import { jobSnapshot } from './job-snapshot.js';
import { accountRefusal } from './policy.js';
import type { RunContext } from './run-context.js';

/**
 * One poll of this batch's unfinished jobs: every page of the workspace's queued and running jobs,
 * then a single GET /jobs/{id} for each of ours that left the list. No per-job polling loop.
 * A job accepted after the listing began may simply be missing from it, so it waits for the next.
 */
export async function pollUnfinished(run: RunContext): Promise<void> {
  const { client, ledger, clock, reporter } = run.deps;
  const { state } = run;
  if (state.watchingCount === 0) return;
  const startedAt = clock.now();
  const listed = new Map<string, Job>();
  try {
    for await (const page of client.listJobPages({ status: ['queued', 'running'], limit: 100 })) {
      for (const job of page.data.data) if (state.watched(job.id)) listed.set(job.id, job);
    }
  } catch (error) {
    refuseOrWarn(run, error, 'listing unfinished jobs');
    return;
  }
  for (const [jobId, entry] of state.watchedJobs()) {
    const seen = listed.get(jobId);
    if (seen) {
      if (seen.status !== entry.attempt.jobStatus)
        state.watch(jobId, ledger.recordJob(entry.attempt.id, jobSnapshot(seen)), entry.acceptedAt);
      continue;
    }
    if (entry.acceptedAt >= startedAt) continue;
    try {
      const answer = await client.getJob(jobId);
      const attempt = ledger.recordJob(entry.attempt.id, jobSnapshot(answer.data));
      handleJob(run, attempt, answer.data, answer.retryAfter);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        jobUnknown(run, jobId, entry.attempt);
        continue;
      }
      refuseOrWarn(run, error, `fetching job ${jobId}`);
      if (state.stop?.kind === 'account_refused') return;
    }
  }
  reporter.log('info', `polled: ${state.watchingCount} job(s) unfinished`);
}

/** Learns the service's poll interval from one job's Retry-After when nothing told it yet. */
export async function probePollInterval(run: RunContext): Promise<void> {
  const first = run.state.watchedJobs()[0];
  if (!first) return;
  const [jobId, entry] = first;
  try {
    const answer = await run.deps.client.getJob(jobId);
    if (run.state.watched(jobId)) {
      const attempt = run.deps.ledger.recordJob(entry.attempt.id, jobSnapshot(answer.data));
      handleJob(run, attempt, answer.data, answer.retryAfter);
    }
    // A final job names no Retry-After: assume the service's documented interval.
    if (answer.retryAfter === null && run.state.retryAfterMs === null) run.state.learnRetryAfter(10);
  } catch (error) {
    refuseOrWarn(run, error, 'fetching a job');
  }
}

/**
 * The service says the job does not exist (another service or account than the ledger's): asking
 * again every poll would never end, so the item fails, as it does when a re-run finds it so. A job
 * that answered an older version of the item no longer matters: the item goes out afresh.
 */
function jobUnknown(run: RunContext, jobId: string, attempt: AttemptRecord): void {
  run.state.unwatch(jobId);
  const tracked = run.state.item(attempt.itemId);
  if (!tracked) return;
  if (tracked.hash !== attempt.requestHash) {
    run.enqueue(attempt.itemId);
    return;
  }
  run.setItem(attempt.itemId, 'failed', {
    errorCode: 'job_not_found',
    errorMessage: `job ${jobId} is unknown to the service`,
  });
}

function refuseOrWarn(run: RunContext, error: unknown, doing: string): void {
  const refusal = accountRefusal(error);
  if (refusal) {
    run.state.stopWith(refusal);
    run.state.refuseWatching();
    run.deps.reporter.log('error', `the service refused the account while ${doing}: ${refusal.message}`);
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  run.deps.reporter.log('warn', `${doing} failed (${message}); trying again at the next poll`);
}
