import { ApiError } from '../errors.js';
import type { AttemptRecord } from '../ledger/index.js';
import type { Job } from '../service-client/schemas.js';
import { handleJob } from './job-outcome.js';
import { jobSnapshot } from './job-snapshot.js';
import { paceFromAnswer } from './poll-timing.js';
import type { RunContext } from './run-context.js';
import type { WatchedJob } from './run-state.js';
import { accountRefusal, isOutage } from './stop-rules.js';

/** Pages one look reads at most, beyond what this batch's own jobs fill: other clients share the list. */
const EXTRA_PAGES = 4;
const PAGE = 100;
/** A job restored from the ledger has no service created_at yet: list from well before our own record. */
const RESTORED_MARGIN_MS = 60 * 60 * 1000;

/**
 * One look at this batch's unfinished jobs: GET /jobs over every status, created since the oldest
 * of them, so that the jobs that finished come back with their fresh output URLs and no per-job
 * GET is needed (docs/performance.md). The pages are bounded, because a workspace may hold many
 * other jobs; a job of ours the bounded listing did not show is fetched on its own. A job accepted
 * after the listing began may simply be missing from it, so it waits for the next look. Returns
 * how many watched jobs it found final (the look limits count the jobs followed). A runner of a
 * shared ledger looks through shared-look.ts instead.
 */
export async function pollUnfinished(run: RunContext): Promise<number> {
  const { clock, observer } = run.deps;
  const { state } = run;
  if (state.watchingCount === 0) return 0;
  const startedAt = clock.now();
  const watched = state.watchedJobs();
  const listed = await listJobs(
    run,
    oldestCreatedAt(watched.map(ownJob)),
    new Set(watched.map(([id]) => id)),
  );
  if (listed === null) return 0;
  const finished = await noteListed(run, listed, startedAt);
  observer.log('info', `polled: ${state.watchingCount} job(s) unfinished`);
  return finished;
}

/**
 * Notes what a listing showed of this run's watched jobs, and fetches those it did not show that
 * were accepted before it began (`startedAt`). Returns how many it found final.
 */
export async function noteListed(
  run: RunContext,
  listed: ReadonlyMap<string, Job>,
  startedAt: number,
): Promise<number> {
  const { state } = run;
  const watched = state.watchedJobs();
  const seen: SeenJob[] = [];
  for (const [jobId, entry] of watched) {
    const job = listed.get(jobId);
    if (job) seen.push({ attempt: entry.attempt, job });
  }
  let finished = await noteJobs(run, seen);
  for (const [jobId, entry] of watched) {
    if (listed.has(jobId) || entry.acceptedAt >= startedAt) continue;
    const answer = await fetchJob(run, jobId);
    if (answer === 'unknown') jobUnknown(run, jobId, entry.attempt);
    else if (answer !== 'failed') {
      if (await noteJob(run, entry.attempt, answer.data, answer.retryAfter)) finished += 1;
    } else if (state.watchRefused || state.outage.since !== null) return finished;
  }
  return finished;
}

/**
 * The jobs among `wanted` that GET /jobs shows, created since `createdAfter`; pages until every
 * wanted job is found, or the bound. Null when the listing failed (said, or the run stopped).
 */
export async function listJobs(
  run: RunContext,
  createdAfter: string,
  wanted: ReadonlySet<string>,
): Promise<Map<string, Job> | null> {
  const { client, clock } = run.deps;
  const listed = new Map<string, Job>();
  try {
    const query = { created_after: createdAfter, limit: PAGE };
    let pages = 0;
    const maxPages = Math.ceil(wanted.size / PAGE) + EXTRA_PAGES;
    for await (const page of client.listJobPages(query)) {
      run.state.budget.sent(clock.now(), true);
      for (const job of page.data.data) if (wanted.has(job.id)) listed.set(job.id, job);
      pages += 1;
      if (listed.size === wanted.size || pages >= maxPages) break;
    }
  } catch (error) {
    refuseOrWarn(run, error, 'listing jobs');
    return null;
  }
  run.serviceAnswered();
  return listed;
}

/** One job's GET: its answer, 'unknown' (404 job_not_found), or 'failed' (said, or the run stopped). */
export async function fetchJob(
  run: RunContext,
  jobId: string,
): Promise<{ data: Job; retryAfter: number | null } | 'unknown' | 'failed'> {
  try {
    run.state.budget.sent(run.deps.clock.now(), true);
    const answer = await run.deps.client.getJob(jobId);
    run.serviceAnswered();
    return answer;
  } catch (error) {
    if (isJobUnknown(error)) return 'unknown';
    refuseOrWarn(run, error, `fetching job ${jobId}`);
    return 'failed';
  }
}

/** A watched job's attempt and what the service said of its job. */
export interface SeenJob {
  attempt: AttemptRecord;
  job: Job;
}

/**
 * Records what a look saw of watched jobs, those that changed in one ledger step, and acts on each
 * in turn (noteJob); returns how many are final.
 */
export async function noteJobs(run: RunContext, seen: readonly SeenJob[]): Promise<number> {
  const changed = seen.filter(({ attempt, job }) => {
    if (isFinal(job) || job.status !== attempt.jobStatus) return true;
    run.state.watch(job.id, attempt, run.deps.clock.now(), job.created_at);
    return false;
  });
  const views = changed.map(({ attempt, job }) => ({ attemptId: attempt.id, job: jobSnapshot(job) }));
  const recorded = await run.deps.ledger.recordJobs(views);
  for (const [n, { job }] of changed.entries()) handleJob(run, recorded[n]!, job);
  return changed.filter(({ job }) => isFinal(job)).length;
}

const isFinal = (job: Job) => job.status !== 'queued' && job.status !== 'running';

/** Records what the service said of a watched job, and acts on it once it is final; true if it is. */
export async function noteJob(
  run: RunContext,
  attempt: AttemptRecord,
  job: Job,
  retryAfter: number | null = null,
): Promise<boolean> {
  const final = isFinal(job);
  if (!final && job.status === attempt.jobStatus) {
    run.state.watch(job.id, attempt, run.deps.clock.now(), job.created_at);
    return false;
  }
  handleJob(run, await run.deps.ledger.recordJob(attempt.id, jobSnapshot(job)), job, retryAfter);
  return final;
}

/** A job a look lists for: when the service created it, else when its attempt was prepared. */
export interface ListedFor {
  createdAt: string | null;
  preparedAt: string;
}

/** A watched job as a look lists for it. */
export function ownJob([, entry]: [string, WatchedJob]): ListedFor {
  return { createdAt: entry.createdAt, preparedAt: entry.attempt.createdAt };
}

/** The earliest creation time of these jobs, as the service wrote it where known. */
export function oldestCreatedAt(jobs: readonly ListedFor[]): string {
  let oldest = Number.POSITIVE_INFINITY;
  let text: string | null = null;
  for (const job of jobs) {
    const at = job.createdAt ? Date.parse(job.createdAt) : Date.parse(job.preparedAt) - RESTORED_MARGIN_MS;
    if (at < oldest) {
      oldest = at;
      text = job.createdAt ?? null;
    }
  }
  if (text !== null && Date.parse(text) === oldest) return text;
  return new Date(Number.isFinite(oldest) ? oldest : 0).toISOString();
}

/**
 * Asks one followed job for the service's Retry-After (only GET /jobs/{id} of an unfinished job is
 * sure to carry it). Returns whether the pace is settled: false when the job asked had finished,
 * since its answer says nothing of the pace (paceFromAnswer): it has left the watched jobs, and the
 * loop asks the next one instead of taking a final job's silence for the documented 10 s. A failed
 * request settles it at the documented interval rather than asking again at once.
 */
export async function probePollInterval(run: RunContext): Promise<boolean> {
  const first = run.state.watchedJobs()[0];
  if (!first) return false;
  const [jobId, entry] = first;
  try {
    run.state.budget.sent(run.deps.clock.now(), true);
    const answer = await run.deps.client.getJob(jobId);
    run.serviceAnswered();
    const final = answer.data.status !== 'queued' && answer.data.status !== 'running';
    run.state.learnRetryAfter(paceFromAnswer(final, answer.retryAfter));
    if (run.state.watched(jobId)) {
      const attempt = await run.deps.ledger.recordJob(entry.attempt.id, jobSnapshot(answer.data));
      handleJob(run, attempt, answer.data, answer.retryAfter);
    }
    // A final job has left the watched jobs (handleJob), so the next probe asks another one; were
    // it still there, asking again would ask it forever: its silence then settles the pace.
    return !final || run.state.watched(jobId) !== undefined;
  } catch (error) {
    if (isJobUnknown(error)) {
      jobUnknown(run, jobId, entry.attempt);
      return false;
    }
    refuseOrWarn(run, error, 'fetching a job');
    return true;
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
    const code = error.code;
    run.stopWith(
      { kind: 'service_route', code, message: error.message },
      `the service has no route for ${doing} (${error.message}); stopping: check \`baseUrl\``,
    );
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (isOutage(error)) {
    run.serviceUnanswered(`${doing}: ${message}`);
    return;
  }
  run.deps.observer.log('warn', `${doing} failed (${message}); trying again at the next poll`);
}
