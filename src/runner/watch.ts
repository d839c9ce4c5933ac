import { ApiError } from '../api/errors.js';
import type { Job } from '../api/schemas.js';
import type { AttemptRecord } from '../ledger/records.js';
import type { BatchRun } from './batch-run.js';
import { jobSnapshot } from './job-snapshot.js';

/**
 * One poll of this batch's unfinished jobs: every page of the workspace's queued and running jobs,
 * then a single GET /jobs/{id} for each of ours that left the list. No per-job polling loop.
 * A job accepted after the listing began may simply be missing from it, so it waits for the next.
 */
export async function pollUnfinished(run: BatchRun): Promise<void> {
  const { client, ledger, clock, reporter } = run.deps;
  if (run.watching.size === 0) return;
  const startedAt = clock.now();
  const listed = new Map<string, Job>();
  try {
    for await (const page of client.listJobPages({ status: ['queued', 'running'], limit: 100 })) {
      for (const job of page.data.data) if (run.watching.has(job.id)) listed.set(job.id, job);
    }
  } catch (error) {
    refuseOrWarn(run, error, 'listing unfinished jobs');
    return;
  }
  for (const [jobId, entry] of [...run.watching]) {
    const seen = listed.get(jobId);
    if (seen) {
      if (seen.status !== entry.attempt.jobStatus) {
        entry.attempt = ledger.recordJob(entry.attempt.id, jobSnapshot(seen));
      }
      continue;
    }
    if (entry.acceptedAt >= startedAt) continue;
    try {
      const answer = await client.getJob(jobId);
      const attempt = ledger.recordJob(entry.attempt.id, jobSnapshot(answer.data));
      entry.attempt = attempt;
      run.handleJob(attempt, answer.data, answer.retryAfter);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        jobUnknown(run, jobId, entry.attempt);
        continue;
      }
      refuseOrWarn(run, error, `fetching job ${jobId}`);
      if (run.stop?.kind === 'account_refused') return;
    }
  }
  reporter.log('info', `polled: ${run.watching.size} job(s) unfinished`);
}

/** Learns the service's poll interval from one job's Retry-After when nothing told it yet. */
export async function probePollInterval(run: BatchRun): Promise<void> {
  const first = run.watching.keys().next();
  if (first.done) return;
  try {
    const answer = await run.deps.client.getJob(first.value);
    const entry = run.watching.get(first.value);
    if (entry) {
      entry.attempt = run.deps.ledger.recordJob(entry.attempt.id, jobSnapshot(answer.data));
      run.handleJob(entry.attempt, answer.data, answer.retryAfter);
    }
    if (answer.retryAfter === null) run.lastRetryAfterMs ??= 10_000;
  } catch (error) {
    refuseOrWarn(run, error, 'fetching a job');
  }
}

/**
 * The service says the job does not exist (another service or account than the ledger's): asking
 * again every poll would never end, so the item fails, as it does when a re-run finds it so. A job
 * that answered an older version of the item no longer matters: the item goes out afresh.
 */
function jobUnknown(run: BatchRun, jobId: string, attempt: AttemptRecord): void {
  run.watching.delete(jobId);
  const tracked = run.items.get(attempt.itemId);
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

function refuseOrWarn(run: BatchRun, error: unknown, doing: string): void {
  if (error instanceof ApiError && (error.status === 401 || error.status === 402)) {
    run.stop = {
      kind: 'account_refused',
      code: error.code ?? `http_${error.status}`,
      message: error.message,
    };
    run.watchRefused = true;
    run.deps.reporter.log('error', `the service refused the account while ${doing}: ${error.message}`);
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  run.deps.reporter.log('warn', `${doing} failed (${message}); trying again at the next poll`);
}
