import type { BatchJob, JobView } from '../ledger/index.js';
import { type Job, jobSchema } from '../service-client/schemas.js';
import type { RunContext } from './run-context.js';
import {
  fetchJob,
  jobUnknown,
  type ListedFor,
  listJobs,
  noteJob,
  noteJobs,
  noteListed,
  oldestCreatedAt,
  ownJob,
  type SeenJob,
} from './watch.js';

/**
 * The lister lease's turn, in poll intervals: the lister keeps the lease while it looks at least this
 * often; once nobody looked for that long (its lister died, ended, or follows nothing), the next
 * runner that looks takes it.
 */
const TURN_INTERVALS = 1.5;
/**
 * A job of this run's that no view has shown this many turns after it was accepted is fetched by
 * its own runner: a lister that cannot see it (a key of another workspace, say) never shows it.
 */
const ORPHAN_TURNS = 3;

/**
 * One look of a runner on a shared ledger (docs/shared-ledger.md, "One lister"). The runner that
 * holds the batch's lister lease lists the service's jobs for every runner of the batch, as a runner on
 * its own lists for itself (watch.ts), and writes what it saw of the other runners' jobs into the
 * ledger; every other runner reads its own jobs' views there instead of listing the workspace's
 * jobs, everyone's among them, on its own. Returns how many watched jobs it found final.
 */
export async function lookShared(run: RunContext): Promise<number> {
  const shared = run.shared;
  if (shared === null || run.state.watchingCount === 0) return 0;
  const turnMs = TURN_INTERVALS * run.pollIntervalMs;
  const batchJobs = await shared.claims.takeListerLease(turnMs);
  if (batchJobs === null) return readViews(run, turnMs * ORPHAN_TURNS);
  const finished = await listForBatch(run, batchJobs);
  // Following nothing more, it looks no more: the next runner to look need not wait out the turn.
  if (run.state.watchingCount === 0) await shared.claims.releaseListerLease();
  return finished;
}

/** The lister's look: the batch's unfinished jobs listed once, the others' published, its own noted. */
async function listForBatch(run: RunContext, batchJobs: readonly BatchJob[]): Promise<number> {
  const { state } = run;
  const shared = run.shared!;
  const startedAt = run.deps.clock.now();
  const watched = state.watchedJobs();
  const others = batchJobs.filter((job) => state.watched(job.jobId) === undefined);
  const wanted = new Set([...watched.map(([id]) => id), ...others.map((job) => job.jobId)]);
  const from: ListedFor[] = [...watched.map(ownJob), ...others];
  const listed = await listJobs(run, oldestCreatedAt(from), wanted);
  if (listed === null) return 0;
  const unfinished = batchJobs.map((job) => job.jobId);
  await publish(run, viewsOf(others, listed), unfinished);
  const finished = await noteListed(run, listed, startedAt);
  // Jobs of others the bounded listing did not show, as a runner fetches its own (noteListed).
  const fetched: Job[] = [];
  for (const job of others) {
    if (listed.has(job.jobId) || shared.unseenByLister(job.jobId)) continue;
    const answer = await fetchJob(run, job.jobId);
    if (answer === 'unknown') shared.notSeenByLister(job.jobId);
    else if (answer === 'failed') break;
    else fetched.push(answer.data);
  }
  if (fetched.length > 0) await publish(run, fetched.map(viewOf), unfinished);
  // At most one line per look interval, however often the runner looks.
  if (shared.lookLineDue(run.deps.clock.now(), run.pollIntervalMs))
    run.deps.observer.log('info', `polled for the batch: ${wanted.size} job(s) unfinished`);
  return finished;
}

function viewsOf(jobs: readonly BatchJob[], listed: ReadonlyMap<string, Job>): JobView[] {
  const views: JobView[] = [];
  for (const job of jobs) {
    const seen = listed.get(job.jobId);
    if (seen) views.push(viewOf(seen));
  }
  return views;
}

function viewOf(job: Job): JobView {
  return { jobId: job.id, status: job.status, job: JSON.stringify(job) };
}

/** Writes the views whose status changed since this lister last wrote them (all, for a new lister). */
async function publish(
  run: RunContext,
  views: readonly JobView[],
  unfinished: readonly string[],
): Promise<void> {
  const shared = run.shared!;
  const changed = shared.changedViews(views, unfinished);
  if (changed !== null) await shared.claims.publishViews(changed, unfinished);
}

/**
 * Another runner holds the lister lease: this run's jobs as its views show them. A job no view has shown
 * `orphanMs` after it was accepted is fetched here (see ORPHAN_TURNS).
 */
async function readViews(run: RunContext, orphanMs: number): Promise<number> {
  const { state } = run;
  const watched = state.watchedJobs();
  const views = new Map(
    (await run.shared!.claims.jobViews(watched.map(([id]) => id))).map((view) => [view.jobId, view]),
  );
  const now = run.deps.clock.now();
  const seen: SeenJob[] = [];
  for (const [jobId, entry] of watched) {
    const view = views.get(jobId);
    // Unchanged and unfinished: nothing to learn from its view.
    if (view === undefined || view.status === entry.attempt.jobStatus) continue;
    const job = parseView(view);
    if (job !== null) seen.push({ attempt: entry.attempt, job });
  }
  let finished = await noteJobs(run, seen);
  for (const [jobId, entry] of watched) {
    if (views.has(jobId) || !(now - entry.acceptedAt > orphanMs)) continue;
    const answer = await fetchJob(run, jobId);
    if (answer === 'unknown') jobUnknown(run, jobId, entry.attempt);
    else if (answer === 'failed') return finished;
    else if (await noteJob(run, entry.attempt, answer.data, answer.retryAfter)) finished += 1;
  }
  return finished;
}

function parseView(view: JobView): Job | null {
  try {
    return jobSchema.parse(JSON.parse(view.job));
  } catch {
    return null;
  }
}
