import { ApiError } from '../api/errors.js';
import { fileMatches, removeTempFiles } from '../downloads/verify-file.js';
import { type AttemptRecord, type FileRecord, type ItemRecord, newItemRecord } from '../ledger/records.js';
import { BatchRun, type RunDeps, type RunOptions, type StopReason } from './batch-run.js';
import { latestAttempts, planItem, retriesCarried } from './item-plan.js';
import { jobSnapshot } from './job-snapshot.js';
import { KEY_MEMORY_MS } from './policy.js';
import { requestHash } from './request.js';
import { pollUnfinished, probePollInterval } from './watch.js';

export interface RunResult {
  stop: StopReason | null;
  /** The loop ended because the key was refused while jobs were still being watched. */
  abandonedWatching: boolean;
}

/**
 * Resumes whatever the ledger says is under way, then submits, watches and saves until every
 * item is settled or a stop (drain, refused account) lets nothing more happen.
 */
export async function runBatch(
  deps: RunDeps,
  options: RunOptions,
  onInterrupt?: (drain: () => void) => void,
): Promise<RunResult> {
  const run = new BatchRun(deps, options);
  onInterrupt?.(() => {
    if (!run.stop) {
      run.stop = { kind: 'draining' };
      deps.reporter.log(
        'warn',
        'stopping: no new submissions; finishing jobs in flight (Ctrl-C again to quit now)',
      );
    }
    run.wake();
  });
  const removed = await removeTempFiles(deps.manifest.outputDir);
  if (removed > 0)
    deps.reporter.log('info', `removed ${removed} temporary file(s) left by an interrupted run`);

  const prepared = await restoreFromLedger(run);
  await readAccount(run);
  for (const attempt of prepared) run.background(resumeUnanswered(run, attempt));

  let lastPoll = deps.clock.now();
  let probed = options.pollIntervalMs !== null;
  while (!run.isSettled() && !run.watchRefused) {
    if (run.fatal !== null) throw run.fatal;
    run.fillSlots();
    reportProgress(run);
    if (run.isSettled()) break;
    if (!probed && run.watching.size > 0) {
      probed = true;
      await probePollInterval(run);
      continue;
    }
    const untilPoll =
      run.watching.size > 0 ? lastPoll + run.pollIntervalMs - deps.clock.now() : Number.POSITIVE_INFINITY;
    // Always yield to the event loop, even with nothing to wait for, so answers can arrive.
    const wait = Math.max(1, Math.min(untilPoll, run.nextQueueDelay(), 60_000));
    await run.sleepUntilWoken(wait);
    if (run.watching.size > 0 && deps.clock.now() >= lastPoll + run.pollIntervalMs) {
      lastPoll = deps.clock.now();
      await pollUnfinished(run);
    }
  }
  if (run.fatal !== null) throw run.fatal;
  reportProgress(run, true);
  return { stop: run.stop, abandonedWatching: run.watchRefused && run.unfinished > 0 };
}

/** Rebuilds the in-memory picture from manifest + ledger and queues what each item needs. */
async function restoreFromLedger(run: BatchRun): Promise<AttemptRecord[]> {
  const { ledger, manifest, client, reporter } = run.deps;
  const records = new Map(ledger.listItems().map((record) => [record.itemId, record]));
  const latest = latestAttempts(ledger.listAttempts());
  const filesByAttempt = groupFiles(ledger.listFiles());
  const writes: Array<{ itemId: string } & Omit<ItemRecord, 'itemId' | 'updatedAt'>> = [];
  const unanswered: AttemptRecord[] = [];
  const refetch: AttemptRecord[] = [];
  const verify: AttemptRecord[] = [];

  for (const item of manifest.items) {
    const hash = requestHash(item);
    const existing = records.get(item.id);
    const attempt = latest.get(item.id);
    const plan = planItem(hash, existing, attempt, { regenerateExpired: run.options.regenerateExpired });
    // A job of this item still unfinished when last seen (the item changed while it ran) is followed
    // before anything new goes out: it holds a slot of this batch and its refund belongs in the
    // ledger. Once it is final, handleJob submits the item again if that job answered an old request.
    const earlier =
      plan.action === 'submit' &&
      attempt?.state === 'accepted' &&
      (attempt.jobStatus === 'queued' || attempt.jobStatus === 'running')
        ? attempt
        : null;
    let record: ItemRecord = existing ?? newItemRecord(item.id, hash);
    if (plan.action === 'submit') {
      record = {
        ...record,
        requestHash: hash,
        state: earlier ? 'in_flight' : 'pending',
        retriesUsed: retriesCarried(plan, existing),
        errorCode: null,
        errorMessage: null,
      };
    } else if (record.requestHash !== hash) {
      record = { ...record, requestHash: hash, state: 'in_flight' };
    } else if (plan.label === 'failed' && record.state !== 'failed') {
      // The item's fate was decided by its last attempt's answer before the run was killed.
      record = {
        ...record,
        state: 'failed',
        errorCode: plan.code,
        errorMessage: attempt?.errorMessage ?? null,
      };
    }
    if (record !== existing) writes.push(record);
    run.track(item, hash, record, attempt);
    if (earlier) run.watching.set(earlier.jobId!, { attempt: earlier, acceptedAt: Number.NEGATIVE_INFINITY });
    else if (plan.action === 'submit') run.enqueue(item.id);
    else if (plan.action === 'verify') verify.push(plan.attempt);
    else if (plan.action === 'resume') {
      const resumed = plan.attempt;
      if (resumed.state === 'prepared') unanswered.push(resumed);
      // Files committed, item not yet marked done (a kill between the two): trust them if intact,
      // rather than fetching a job whose outputs may be gone by now.
      else if (resumed.filesSaved && resumed.requestHash === hash) verify.push(resumed);
      else if (resumed.jobStatus === 'queued' || resumed.jobStatus === 'running') {
        run.watching.set(resumed.jobId!, { attempt: resumed, acceptedAt: Number.NEGATIVE_INFINITY });
      } else refetch.push(resumed);
    }
  }
  ledger.putItems(writes);
  // An unanswered attempt of an item since removed from the manifest is resolved all the same: its
  // job may exist and be charged, and its budget reservation must be released.
  const listed = new Set(manifest.items.map((item) => item.id));
  for (const [itemId, attempt] of latest)
    if (!listed.has(itemId) && attempt.state === 'prepared') unanswered.push(attempt);

  for (const attempt of verify) {
    const files = filesByAttempt.get(attempt.id) ?? [];
    const intact = files.length > 0 && (await allMatch(files));
    if (!intact) {
      reporter.log('warn', `${attempt.itemId}: saved file missing or altered; fetching it again`);
      refetch.push(attempt);
    } else if (run.items.get(attempt.itemId)?.record.state !== 'done') run.setItem(attempt.itemId, 'done');
  }
  for (const attempt of refetch) {
    try {
      const answer = await client.getJob(attempt.jobId!);
      const updated = ledger.recordJob(attempt.id, jobSnapshot(answer.data));
      run.handleJob(updated, answer.data, answer.retryAfter);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        run.setItem(attempt.itemId, 'failed', {
          errorCode: 'job_not_found',
          errorMessage: `job ${attempt.jobId} is unknown to the service`,
        });
      } else {
        reporter.log(
          'warn',
          `${attempt.itemId}: could not fetch job ${attempt.jobId}: ${(error as Error).message}; re-run to retry`,
        );
      }
    }
  }
  return unanswered;
}

/**
 * An attempt with no recorded answer goes out again with its own key and body. Past the service's
 * key memory, its job is first looked for in GET /jobs, so a forgotten key cannot pay twice.
 */
async function resumeUnanswered(run: BatchRun, attempt: AttemptRecord): Promise<void> {
  const { clock, client, ledger, manifest, reporter } = run.deps;
  if (clock.now() - Date.parse(attempt.createdAt) > KEY_MEMORY_MS) {
    run.postsInFlight += 1;
    try {
      const since = new Date(Date.parse(attempt.createdAt) - 60 * 60 * 1000).toISOString();
      for await (const page of client.listJobPages({ created_after: since, limit: 100 })) {
        const job = page.data.data.find(
          (candidate) =>
            candidate.metadata['mediabatch.manifest'] === manifest.name &&
            candidate.metadata['mediabatch.item'] === attempt.itemId &&
            candidate.metadata['mediabatch.attempt'] === String(attempt.seq),
        );
        if (job) {
          reporter.log(
            'info',
            `${attempt.itemId}: found job ${job.id} of an old unanswered submission; adopting it`,
          );
          run.handleJob(ledger.recordAccepted(attempt.id, null, jobSnapshot(job)), job);
          return;
        }
      }
    } catch (error) {
      reporter.log(
        'error',
        `${attempt.itemId}: an unanswered submission is older than 23 hours and the job list could not be read (${(error as Error).message}); not resending it blindly, re-run later`,
      );
      return;
    } finally {
      run.postsInFlight -= 1;
    }
  }
  await run.sendAttempt(attempt, run.capComesFromBudget(attempt.itemId));
}

async function readAccount(run: BatchRun): Promise<void> {
  try {
    const { data } = await run.deps.client.getAccount();
    const limit = data.concurrency.limit;
    run.slotLimit = Math.max(1, Math.min(run.deps.manifest.concurrency ?? limit, limit));
    if (!data.balance.enabled)
      run.deps.reporter.log('warn', 'the API wallet is not enabled; submissions will be refused');
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 402)) {
      run.stop = {
        kind: 'account_refused',
        code: error.code ?? `http_${error.status}`,
        message: error.message,
      };
      run.deps.reporter.log('error', `the service refused the account: ${error.message}`);
      return;
    }
    run.deps.reporter.log(
      'warn',
      `could not read the account (${(error as Error).message}); assuming ${run.slotLimit} slot(s)`,
    );
  }
}

/**
 * The loop turns once per answer, and a snapshot walks every item and sums the ledger's money:
 * with thousands of items that was quadratic, so a UI gets at most one snapshot per 200 ms.
 */
const PROGRESS_EVERY_MS = 200;
const lastProgressAt = new WeakMap<BatchRun, number>();

function reportProgress(run: BatchRun, final = false): void {
  const now = performance.now();
  if (!final && now - (lastProgressAt.get(run) ?? Number.NEGATIVE_INFINITY) < PROGRESS_EVERY_MS) return;
  lastProgressAt.set(run, now);
  const byState = { pending: 0, in_flight: 0, done: 0, failed: 0, budget_exceeded: 0, expired: 0 };
  for (const tracked of run.items.values()) byState[tracked.record.state] += 1;
  const money = run.deps.ledger.moneyTotals();
  run.deps.reporter.progress({
    total: run.items.size,
    byState,
    unfinished: run.unfinished,
    slotLimit: run.slotLimit,
    downloadsActive: run.downloads.activeCount,
    downloadsQueued: run.downloads.queuedCount,
    spentMicros: money.chargedMicros - money.refundedMicros,
    budgetMicros: run.deps.manifest.budgetMicros,
    draining: run.stop?.kind === 'draining',
  });
}

function groupFiles(files: FileRecord[]): Map<number, FileRecord[]> {
  const grouped = new Map<number, FileRecord[]>();
  for (const file of files) grouped.set(file.attemptId, [...(grouped.get(file.attemptId) ?? []), file]);
  return grouped;
}

async function allMatch(files: FileRecord[]): Promise<boolean> {
  for (const file of files) if (!(await fileMatches(file.path, file.bytes, file.sha256))) return false;
  return true;
}
