import { ApiError } from '../api/errors.js';
import type { Job } from '../api/schemas.js';
import type { AttemptRecord } from '../ledger/records.js';
import { handleJob } from './job-outcome.js';
import { jobSnapshot } from './job-snapshot.js';
import { accountRefusal, isOutage } from './policy.js';
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
  run.serviceAnswered();
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
      run.serviceAnswered();
      const attempt = ledger.recordJob(entry.attempt.id, jobSnapshot(answer.data));
      handleJob(run, attempt, answer.data, answer.retryAfter);
    } catch (error) {
      if (isJobUnknown(error)) {
        jobUnknown(run, jobId, entry.attempt);
        continue;
      }
      refuseOrWarn(run, error, `fetching job ${jobId}`);
      if (state.watchRefused || state.outageSince !== null) return;
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
    run.serviceAnswered();
    if (run.state.watched(jobId)) {
      const attempt = run.deps.ledger.recordJob(entry.attempt.id, jobSnapshot(answer.data));
      handleJob(run, attempt, answer.data, answer.retryAfter);
    }
    // A final job names no Retry-After: assume the service's documented interval.
    if (answer.retryAfter === null && run.state.retryAfterMs === null) run.state.learnRetryAfter(10);
  } catch (error) {
    if (isJobUnknown(error)) jobUnknown(run, jobId, entry.attempt);
    else refuseOrWarn(run, error, 'fetching a job');
  }
}

/** 404 job_not_found: the service does not know a job the ledger holds. */
export function isJobUnknown(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && error.code === 'job_not_found';
}

/**
 * The service does not know a job this ledger holds: the ledger belongs to another service or
 * account, or the service lost it. Submitting the item again could pay twice for it, so the run
 * stops submitting, names the job, and leaves the item as it was (docs/services.md). A job that
 * answered an older version of the item no longer matters: the item goes out afresh.
 */
export function jobUnknown(run: RunContext, jobId: string, attempt: AttemptRecord): void {
  run.state.unwatch(jobId);
  const tracked = run.state.item(attempt.itemId);
  if (!tracked) return;
  if (tracked.hash !== attempt.requestHash) {
    run.enqueue(attempt.itemId);
    return;
  }
  run.stopWith(
    { kind: 'ledger_disagrees', jobs: [{ jobId, itemId: attempt.itemId }] },
    `the service does not know job ${jobId} (item ${attempt.itemId}) that the ledger holds; no new submissions`,
  );
}

function refuseOrWarn(run: RunContext, error: unknown, doing: string): void {
  const refusal = accountRefusal(error);
  if (refusal) {
    run.state.refuseWatching();
    run.stopWith(refusal, `the service refused the account while ${doing}: ${refusal.message}`);
    return;
  }
  if (error instanceof ApiError && error.status === 404) {
    run.state.refuseWatching();
    const code = error.code ?? 'http_404';
    run.stopWith(
      { kind: 'service_route', code, message: error.message },
      `the service has no route for ${doing} (${error.message}); stopping: check --base-url`,
    );
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (isOutage(error)) {
    run.serviceUnanswered(`${doing}: ${message}`);
    return;
  }
  run.deps.reporter.log('warn', `${doing} failed (${message}); trying again at the next poll`);
}
