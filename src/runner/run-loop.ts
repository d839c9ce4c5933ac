import { DownloadQueue } from './download-queue.js';
import { downloadFinished } from './job-outcome.js';
import { lookCredit, pollsOver, windowCap } from './look-limits.js';
import { copyLeftExpired } from './lost-copies.js';
import { nextPollAt, type PollTimingInput, startStep } from './poll-timing.js';
import { reportProgress } from './progress-report.js';
import { readAccount, restoreFromLedger, resumeUnanswered } from './restore.js';
import { reuseSavedTakes } from './reuse-takes.js';
import { checkProgramsFirst, checkTakeInRun } from './run-checks.js';
import { RunContext, type RunDeps, type RunOptions } from './run-context.js';
import type { WatchedJob } from './run-state.js';
import { savedBeforeCommit } from './saved-before-commit.js';
import { lookShared } from './shared-look.js';
import { NO_ROOM_RETRY_MS } from './shared-runners.js';
import { isIdle, sharedTurn } from './shared-turn.js';
import { fileSaved, startGuessing } from './size-check.js';
import type { StopReason } from './stop-rules.js';
import { fillSlots } from './submit.js';
import { pollUnfinished, probePollInterval } from './watch.js';

export type { RunDeps, RunOptions } from './run-context.js';

/** The longest a redoable ledger step waits for its group's commit (docs/performance.md). */
const GROUP_COMMIT_MS = 100;

export interface RunResult {
  stop: StopReason | null;
  /** The loop ended because the key was refused while jobs were still being watched. */
  abandonedWatching: boolean;
  /** Items not submitted because a file this ledger did not write holds their name: a re-run alone does not move them. */
  heldBack: string[];
  /** Takes saved in files that are not a container mediabatch reads: left unchecked (docs/checks.md). */
  uncheckedTakes: number;
}

/**
 * One `mediabatch run`: resumes whatever the ledger says is under way, then keeps at most
 * min(concurrency, account limit) of this batch's jobs unfinished, watches them through the job
 * list and saves their files, until every item is settled or a stop (drain, refused account)
 * lets nothing more happen. Every step is committed to the ledger before the next one depends
 * on it, so a kill at any moment can be resumed.
 */
export async function runBatch(
  deps: RunDeps,
  options: RunOptions,
  onInterrupt?: (drain: () => void) => void,
): Promise<RunResult> {
  const run = new RunContext(deps, options, (context) => downloadQueueFor(context));
  try {
    return { ...(await runToTheEnd(run, onInterrupt)), uncheckedTakes: run.checks.unchecked };
  } catch (error) {
    // No request or write of a failed run outlives its result (a library caller may go on to
    // another run, or end the process): the downloads not begun wait for the next run.
    run.downloads.close();
    await run.settleBackground();
    throw error;
  }
}

async function runToTheEnd(
  run: RunContext,
  onInterrupt?: (drain: () => void) => void,
): Promise<Omit<RunResult, 'uncheckedTakes'>> {
  const { deps } = run;
  // Before anything is submitted or resumed: a guessed size that did not fit means one job at a time.
  startGuessing(run);
  // A check of your own whose program is not there stops the run before it buys anything.
  await checkProgramsFirst(run);
  // Only prepareAttempt must be durable at once (before its POST); the rest shares commits.
  deps.ledger.groupCommits(GROUP_COMMIT_MS);
  onInterrupt?.(() =>
    run.stopWith({ kind: 'draining' }, 'stopping: no new submissions; finishing jobs in flight', 'warn'),
  );
  // Other runners of a shared ledger may be writing into the same location: only what nobody
  // has written to for two leases is left over from a killed run.
  const removed = await deps.store.cleanUp(run.shared ? run.shared.claims.leaseMs * 2 : undefined);
  if (removed > 0)
    deps.observer.log('info', `removed ${removed} temporary file(s) left by an interrupted run`);

  const unanswered = await restoreFromLedger(run);
  await readAccount(run);
  for (const attempt of unanswered) run.background(resumeUnanswered(run, attempt));
  await loopUntilSettled(run);
  await settleTwins(run);
  // The item states written without waiting are committed before the run's result is given.
  await deps.ledger.flush();
  run.throwIfFatal();
  await reportProgress(run, true);
  return {
    stop: run.state.stop,
    abandonedWatching: run.state.watchRefused && run.state.unfinished > 0,
    heldBack: [...run.state.queue.heldBack],
  };
}

/**
 * The items that waited for a twin's take (restore.ts, twinsOf) copy it now it is saved; one whose
 * twin saved nothing (it failed, the run stopped) goes out on its own unless the run is stopping.
 */
async function settleTwins(run: RunContext): Promise<void> {
  const { twins, lost, lostOwn } = run.takeTwins();
  if (twins.length === 0) return;
  const { reused } = await reuseSavedTakes(run, twins, new Set(), undefined, lost);
  for (const id of reused) run.setItem(id, 'done');
  const left = twins.filter((item) => !reused.has(item.id));
  const regenerate = (id: string) =>
    lostOwn.has(id) && run.options.regenerateExpired && run.state.stop === null;
  for (const item of left) {
    if (!lost.has(item.id)) continue;
    const words = lostOwn.get(item.id);
    // A lost take is never bought by a plain run: with no intact take of its request left, it is expired.
    if (regenerate(item.id))
      run.deps.observer.log('info', `${item.id}: ${words}; generating it again (\`regenerateExpired\`)`);
    else if (words === undefined) copyLeftExpired(run, item.id);
    else run.setItem(item.id, 'expired', { errorCode: 'expired', errorMessage: words });
  }
  const toSend = left.filter((item) => !lost.has(item.id) || regenerate(item.id));
  if (toSend.length === 0 || run.state.stop !== null) return;
  for (const item of toSend) run.enqueue(item.id);
  await loopUntilSettled(run);
}

function downloadQueueFor(run: RunContext): DownloadQueue {
  const { client, ledger, clock, random, manifest } = run.deps;
  return new DownloadQueue({
    client,
    ledger,
    clock,
    random,
    store: run.deps.store,
    manifestName: manifest.name,
    nameOf: (itemId) => run.state.item(itemId)?.item.name ?? itemId,
    sidecars: manifest.sidecars !== false,
    keptOf: (attempt) => run.keptMark(attempt),
    concurrency: run.options.downloadConcurrency,
    ...(run.options.downloadTimeoutMs ? { timeoutMs: run.options.downloadTimeoutMs } : {}),
    background: (task) => run.background(task),
    savedBeforeCommit: (task) => savedBeforeCommit(run, task),
    filesWritten: () => fileSaved(run),
    checkTake: (attempt, files) => checkTakeInRun(run, attempt, files),
    checkBeforeSidecar: (run.options.ownChecks?.checks.length ?? 0) === 0,
    settled: (task, outcome) => downloadFinished(run, task, outcome),
    freed: () => run.wake(),
    diskRefused: (refusal) => run.diskRefused(refusal),
  });
}

function isSettled(run: RunContext): boolean {
  if (!run.state.submissionsSettled || !run.downloads.idle) return false;
  // Items other runners of a shared ledger work are waited for (their runner may die: this run
  // adopts them), unless this run stops: what it leaves, the others or the next run finish.
  return run.shared === null || run.state.stop !== null || run.shared.waitingOnOthers === 0;
}

/**
 * A drain waits for the jobs in flight, but not through an outage: nothing can be learnt until the
 * service answers, and the ledger already holds every key and job, so the next run takes over.
 */
function drainingThroughOutage(run: RunContext): boolean {
  return run.state.stop?.kind === 'draining' && run.state.outage.since !== null;
}

/**
 * Submits into free slots, sleeps until something can change, and looks at the jobs when
 * poll-timing says a look has become worth its request.
 */
async function loopUntilSettled(run: RunContext): Promise<void> {
  const { clock } = run.deps;
  const { state } = run;
  // --poll-interval, or a Retry-After on a submission's answer (spec-optional), needs no probe.
  let paceSettled = run.options.pollIntervalMs !== null;
  while (!isSettled(run) && !state.watchRefused && !drainingThroughOutage(run)) {
    run.throwIfFatal();
    await sharedTurn(run);
    const heldBack = await fillSlots(run);
    await reportProgress(run);
    if (isSettled(run)) break;
    const step = startStep({
      paceKnown: paceSettled || state.retryAfterMs !== null,
      watching: state.watchingCount,
      unseen: state.unseenCount,
      looked: state.lastLookAt !== null,
    });
    if (step === 'look') {
      state.looked(clock.now());
      await look(run);
      continue;
    }
    if (step === 'probe') {
      paceSettled = await probePollInterval(run);
      continue;
    }
    const pollAt = nextPollAt(pollTimingInput(run));
    // Always yield to the event loop, even with nothing to wait for, so answers can arrive.
    const renewal = run.shared?.untilRenewal(clock.now(), isIdle(run)) ?? Number.POSITIVE_INFINITY;
    const wait = Math.max(
      1,
      Math.min(
        pollAt - clock.now(),
        state.queue.nextDelay(clock.now()),
        renewal,
        heldBack ? NO_ROOM_RETRY_MS : 60_000,
      ),
    );
    await run.sleepUntilWoken(wait);
    // Woken by one answer, let every answer already received be handled before acting: the
    // submissions they free then share one ledger commit instead of one commit each.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (state.watchingCount > 0 && clock.now() >= nextPollAt(pollTimingInput(run))) {
      state.looked(clock.now());
      await look(run);
    }
  }
}

/** A look at the jobs: through the batch's one lister on a shared ledger (shared-look.ts). */
function look(run: RunContext): Promise<number> {
  return run.shared === null ? pollUnfinished(run) : lookShared(run);
}

function pollTimingInput(run: RunContext): PollTimingInput {
  const { state } = run;
  const now = run.deps.clock.now();
  const retryAfterMs = run.pollIntervalMs;
  const running = state.watchedJobs().map(([, entry]) => ({ startedAt: startedAt(entry, now) }));
  // A stopped run submits nothing more: no finish frees a slot for anyone.
  const queued = state.stop ? 0 : state.queue.length;
  let earned = state.budget.earnedByEnded + queued;
  for (const job of running) earned += pollsOver(job.startedAt, now, retryAfterMs);
  const slots = Math.max(1, Math.min(state.slotLimit, running.length + queued));
  return {
    now,
    lastPollAt: state.lastLookAt,
    retryAfterMs,
    running,
    durationsMs: state.durationsMs,
    queued,
    slots,
    handsOn: state.itemCount > state.slotLimit,
    credit: lookCredit(earned, state.budget.polls, NEW_LEDGER_CHECK),
    recentRequests: state.budget.sentSince(now - retryAfterMs),
    windowCap: windowCap(state.slotLimit),
  };
}

/** The check for jobs a new ledger does not know (batch/service/known-jobs-check.ts) is one list call before the loop. */
const NEW_LEDGER_CHECK = 1;

/**
 * When a watched job began on the run's clock; a job restored from the ledger, when its submission
 * was answered (as a job of this run counts from its answer), else when it was sent.
 */
function startedAt(entry: WatchedJob, now: number): number {
  if (Number.isFinite(entry.acceptedAt)) return entry.acceptedAt;
  const answered = Date.parse(entry.attempt.answeredAt ?? entry.attempt.createdAt);
  return Number.isFinite(answered) ? Math.min(answered, now) : now;
}
