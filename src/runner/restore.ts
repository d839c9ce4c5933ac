import { type AttemptRecord, type ItemRecord, newItemRecord, type ReusableTake } from '../ledger/index.js';
import { type ManifestItem, submitOrder } from '../manifest/index.js';
import { readRejections } from './fallback-steps.js';
import { fetchHeldResults } from './held-results.js';
import { findJobOfAttempt, keyMayBeForgotten } from './idempotency.js';
import {
  currentRequest,
  earlierOutput,
  type ItemPlan,
  latestAttempts,
  planItem,
  retriesCarried,
} from './item-plan.js';
import { handleJob } from './job-outcome.js';
import { jobSnapshot } from './job-snapshot.js';
import { recoverLostCopy } from './lost-copies.js';
import { itemsHeldBack } from './names-in-the-way.js';
import { narrowRead } from './narrow-read.js';
import type { Next } from './next-step.js';
import { adoptRenames } from './rename-items.js';
import { requestHash } from './request.js';
import { countFailedTakes, rerollsNow } from './rerolls-due.js';
import { batchRows, reuseSavedTakes } from './reuse-takes.js';
import type { RunContext } from './run-context.js';
import { namesOf } from './shown-ids.js';
import { accountRefusal } from './stop-rules.js';
import { sendAttempt } from './submit.js';
import { twinsOf } from './twins.js';
import { verifySavedFiles } from './verify-saved.js';
import { isJobUnknown, jobUnknown } from './watch.js';

/**
 * Rebuilds the run's state from manifest + ledger and sets each item on its way. Returns the
 * attempts that went unanswered, to be resolved (`resumeUnanswered`) once the account is known.
 */
export async function restoreFromLedger(run: RunContext): Promise<AttemptRecord[]> {
  const { ledger, manifest } = run.deps;
  // --only: the other items are left exactly as they are, unanswered attempts included.
  const only = run.options.only ?? null;
  const items = only ? manifest.items.filter((item) => only.has(item.id)) : manifest.items;
  // Renamed items take their paid results first, so the ledger read below knows them by the new id.
  const renames = await adoptRenames(run, items);
  // Then every item that would be paid for takes a saved take of its very request, if one is intact.
  // The ledger is read once for both; again only when a take was copied (it wrote new rows).
  const read = await batchRows(ledger);
  // Before any item is looked at: a rejected request is neither sent nor looked for (fallback.ts).
  await readRejections(run, read.records);
  const { reused, heldResults } = await reuseSavedTakes(run, items, renames.held, read);
  const { records, attempts } = reused.size > 0 ? await batchRows(ledger) : read;
  const latest = latestAttempts(attempts);
  await countFailedTakes(run, records);
  const rows = { records, latest, heldRenames: renames.held, heldResults };
  const unanswered = await setOnTheirWay(run, items, rows);
  // An unanswered attempt of an item since removed from the manifest is resolved all the same: its
  // job may exist and be charged, and its budget reservation must be released.
  const listed = new Set(manifest.items.map((item) => item.id));
  for (const [itemId, attempt] of latest)
    if (!listed.has(itemId) && attempt.state === 'prepared') unanswered.push(attempt);
  return unanswered;
}

/**
 * Items another runner of a shared ledger held, read again now that it let them go (it finished
 * them, or its lease lapsed): set on their way as at a run's start, their unanswered POSTs resent
 * with their own keys, their jobs followed, their files saved.
 */
export async function adoptItems(run: RunContext, itemIds: readonly string[]): Promise<void> {
  const { ledger } = run.deps;
  const wanted = new Set(itemIds);
  // Only these items' rows: every runner adopts at every turn, and the whole batch read each time
  // grew each runner's CPU per item with the batch's size and the number of runners.
  const records = new Map(
    (await ledger.listItems(narrowRead(itemIds)))
      .filter((record) => wanted.has(record.itemId))
      .map((record) => [record.itemId, record]),
  );
  const items: ManifestItem[] = [];
  for (const id of itemIds) {
    const record = records.get(id);
    if (finishedThere(run, id, record)) run.state.settledElsewhere(id, record);
    else {
      const tracked = run.state.item(id);
      if (tracked) items.push(tracked.item);
    }
  }
  if (items.length === 0) return;
  const open = new Set(items.map((item) => item.id));
  const latest = latestAttempts(
    (await ledger.listAttempts(narrowRead([...open]))).filter((attempt) => open.has(attempt.itemId)),
  );
  const unanswered = await setOnTheirWay(run, items, { records, latest, heldRenames: new Set() }, true);
  // Said once per adoption, not once per item; items another runner finished are no adoption.
  const adopted = items.filter((item) => !isSettled(run, item.id)).map((item) => item.id);
  if (adopted.length > 0)
    run.deps.observer.log(
      'info',
      `adopting ${namesOf(adopted)}: another runner of this batch let ${adopted.length === 1 ? 'it' : 'them'} go unfinished (its lease lapsed)`,
    );
  for (const attempt of unanswered) run.background(resumeUnanswered(run, attempt));
}

/**
 * An item its runner finished with the request this run would send (and no --redo of it): done
 * here too, with nothing of it to read or claim. Each runner of a fleet reads back the items the
 * others finish, and read their attempts as well. Any other done item adopted goes through
 * setOnTheirWay, where doneElsewhere keeps its take from being checked and claimed again.
 */
function finishedThere(
  run: RunContext,
  itemId: string,
  record: ItemRecord | undefined,
): record is ItemRecord {
  return (
    record?.state === 'done' &&
    record.requestHash === run.state.item(itemId)?.hash &&
    !(run.options.redo?.includes(itemId) ?? false)
  );
}

/** Done, failed, over budget or expired: nothing more is sent for it unless asked. */
function isSettled(run: RunContext, itemId: string): boolean {
  const state = run.state.item(itemId)?.record.state;
  return state !== undefined && state !== 'pending' && state !== 'in_flight';
}

interface LedgerRows {
  records: Map<string, ItemRecord>;
  latest: Map<string, AttemptRecord>;
  heldRenames: ReadonlySet<string>;
  /** Items with no intact take of their request, and a take whose job the service holds (held-results.ts). */
  heldResults?: ReadonlyMap<string, ReusableTake>;
}

/**
 * Tracks each item as its record and latest attempt say, and sets it on its way: queued, watched,
 * verified, fetched again, or resent (returned: resolved once the account is known). On a shared
 * ledger, only the items this runner may work act; the others wait for their runner.
 */
async function setOnTheirWay(
  run: RunContext,
  items: readonly ManifestItem[],
  { records, latest, heldRenames, heldResults = new Map() }: LedgerRows,
  /** Items adopted from another runner of this run's batch, not read at the run's start. */
  adopted = false,
): Promise<AttemptRecord[]> {
  const writes: ItemRecord[] = [];
  const planned: Next[] = [];
  for (const item of items) {
    const existing = records.get(item.id);
    const attempt = latest.get(item.id);
    const { record, next, hash, memoryOnly } = heldRenames.has(item.id)
      ? heldRename(item)
      : restoreItem(run, item, existing, attempt, adopted);
    if (record !== existing && !memoryOnly) writes.push(record);
    else if (memoryOnly && existing && next.kind === 'submit') run.state.unsent.hold(existing);
    run.state.track(item, hash, record, attempt);
    // Not claimed either: a claim nobody lets go would be renewed with every lease until the run ends.
    planned.push(
      adopted && next.kind === 'verify' && doneElsewhere(run, next.attempt) ? { kind: 'none' } : next,
    );
  }
  const settled = new Set(items.filter((item) => isSettled(run, item.id)).map((item) => item.id));
  const steps = run.shared ? await run.shared.ownSteps(items, planned, settled) : planned;
  // Another runner's items are its to write: a record read a moment ago may be behind its own.
  const shared = run.shared;
  await run.deps.ledger.putItems(
    shared ? writes.filter((record) => !shared.isElsewhere(record.itemId)) : writes,
  );
  for (const next of steps)
    if (next.kind === 'watch') run.state.watch(next.attempt.jobId!, next.attempt, Number.NEGATIVE_INFINITY);
  // Breadth first: variant 1 of every item, then variant 2, as plan foresees (submitOrder).
  const toSubmit = submitOrder(items)
    .filter((index) => steps[index]?.kind === 'submit')
    .map((index) => items[index]!.id);
  const held = await itemsHeldBack(run, toSubmit);
  for (const id of [...held, ...heldRenames]) run.state.queue.holdBack(id);
  const unanswered = steps.flatMap((next) => (next.kind === 'resend' ? [next.attempt] : []));
  const refetch = steps.flatMap((next) => (next.kind === 'refetch' ? [next.attempt] : []));
  const verify = steps.flatMap((next) => (next.kind === 'verify' ? [next.attempt] : []));
  refetch.push(...(await verifySavedFiles(run, verify)));
  // A request is acquired once: an item asking for a result this run fetches again waits for it.
  const fetched = refetch.filter((attempt) => attempt.jobId !== null && stillHeldBy(run, attempt));
  // So is a job this run follows (in flight, or a POST sent again under its key): a killed run's
  // twin waited for it, and paying for the twin now would buy its request twice.
  const followed = steps.flatMap((next) =>
    next.kind === 'watch' || next.kind === 'resend' ? [next.attempt] : [],
  );
  const twins = twinsOf(run, items, toSubmit, [...fetched, ...followed]);
  const sending = toSubmit.filter((id) => !held.has(id) && !twins.has(id));
  // A request a job still holds is fetched again from it, never sent: it was paid for once.
  const fetching = await fetchHeldResults(run, sending, heldResults, latest);
  for (const id of sending) if (!fetching.has(id)) run.enqueue(id);
  await refetchJobs(run, refetch);
  return unanswered;
}

/**
 * A take another runner of the batch saved and marked done a moment ago, adopted as it let the
 * item go: it checked the files as it saved them. Checking them again (every file read and hashed,
 * its sidecars read) made each of four runners check the others' takes too (issue 52, fleet CPU:
 * 13,000 take checks read for 10,000 items). A run's start still checks every saved take. It is
 * not claimed either: a runner kept adopting them, and renewed the claims of thousands of done
 * items with every lease until it ended.
 */
function doneElsewhere(run: RunContext, attempt: AttemptRecord): boolean {
  return run.state.item(attempt.itemId)?.record.state === 'done';
}

/** Whether the service still holds an attempt's outputs, by its word (unknown counts as held). */
function stillHeldBy(run: RunContext, attempt: AttemptRecord): boolean {
  return attempt.expiresAt === null || Date.parse(attempt.expiresAt) > run.deps.clock.now();
}

type Restored = { record: ItemRecord; next: Next; hash: string; memoryOnly?: boolean };

/** One item's record as this run starts it, and what it needs next. Pure apart from the plan. */
function restoreItem(
  run: RunContext,
  item: ManifestItem,
  existing: ItemRecord | undefined,
  attempt: AttemptRecord | undefined,
  adopted: boolean,
): Restored {
  // The run holds every attempt whole, so the recorded request is the attempt itself.
  const { hash } = currentRequest(item, existing, attempt, (whole) => whole);
  const plan = planItem(hash, existing, attempt, {
    regenerateExpired: run.options.regenerateExpired,
    retryFailed: run.options.retryFailed ?? false,
    sameRun: adopted,
    promptLeft: () => run.rejections.fallbackLeft(item),
  });
  const record = existing ?? newItemRecord(item.id, hash);
  if (rerollsNow(run, item, record, hash, adopted)) {
    // Bought again as a re-roll of the last run's (or `mediabatch check`'s) failed take: a new take
    // beside it, the item left checks_failed in the ledger until that take's attempt is prepared.
    run.state.redo(item.id);
    return { hash, record, next: { kind: 'submit' }, memoryOnly: true };
  }
  if (plan.label === 'done' && run.options.redo?.includes(item.id)) {
    run.state.redo(item.id);
    return newTake(record, hash);
  }
  if (plan.action === 'submit') {
    const earlier = earlierOutput(hash, attempt);
    // An edit never replaces a paid take: the new request makes the next take (as --redo does).
    if (earlier === 'preserve') run.state.redo(item.id);
    const restored = toSubmit(record, hash, retriesCarried(plan, existing), earlier, attempt);
    // Sent only on request: the ledger keeps the item as it was until it is sent (unsent-items.ts).
    return onRequestOnly(plan) ? { ...restored, memoryOnly: true } : restored;
  }
  const next = nextForPlan(plan, hash);
  if (record.requestHash !== hash)
    return { hash, record: { ...record, requestHash: hash, state: 'in_flight' }, next };
  if (plan.label === 'failed' && record.state !== 'failed' && record.state !== 'checks_failed') {
    // The item's fate was decided by its last attempt's answer before the run was killed.
    const failed = {
      state: 'failed' as const,
      errorCode: plan.code,
      errorMessage: attempt?.errorMessage ?? null,
    };
    return { hash, record: { ...record, ...failed }, next };
  }
  return { hash, record, next };
}

/** An item a plain run would not send: expired (`regenerateExpired`) or failed (`retryFailed`). */
function onRequestOnly(plan: ItemPlan): boolean {
  return plan.label === 'expired' || (plan.label === 'retry' && plan.reason.startsWith('retry_failed'));
}

/**
 * A renamed item whose new name is taken by a file the ledger did not write: pending, unsent and
 * unwritten, so the next run, once the file is moved, still finds the rename and pays nothing.
 */
function heldRename(item: ManifestItem): Restored {
  const hash = requestHash(item);
  return { hash, record: newItemRecord(item.id, hash), next: { kind: 'none' }, memoryOnly: true };
}

/**
 * A new take goes out like any attempt (key and body durable first); the earlier take stays. The
 * ledger keeps the item done until that attempt is prepared: a run stopped before then leaves no
 * trace of the redo, instead of an item that a plain re-run would regenerate in place.
 */
function newTake(record: ItemRecord, hash: string): Restored {
  return {
    hash,
    record: { ...record, state: 'pending', retriesUsed: 0 },
    next: { kind: 'submit' },
    memoryOnly: true,
  };
}

/**
 * An item that goes out (again). A job of it still unfinished when last seen (the item changed
 * while it ran) is followed first: it was paid for, it holds a slot of this batch and its refund
 * belongs in the ledger; one that succeeded but was never saved is fetched again. Once it is
 * final, handleJob saves what it made as its take and submits the item again, since it answered
 * an old request.
 */
function toSubmit(
  record: ItemRecord,
  hash: string,
  retriesUsed: number,
  output: ReturnType<typeof earlierOutput>,
  attempt: AttemptRecord | undefined,
): Restored {
  const running =
    attempt?.state === 'accepted' && (attempt.jobStatus === 'queued' || attempt.jobStatus === 'running');
  const earlier = running || output === 'fetch' ? (attempt ?? null) : null;
  return {
    hash,
    record: {
      ...record,
      requestHash: hash,
      state: earlier ? 'in_flight' : 'pending',
      retriesUsed,
      errorCode: null,
      errorMessage: null,
    },
    next: earlier ? { kind: running ? 'watch' : 'refetch', attempt: earlier } : { kind: 'submit' },
  };
}

function nextForPlan(plan: ItemPlan, hash: string): Next {
  if (plan.action === 'verify') return { kind: 'verify', attempt: plan.attempt };
  if (plan.action !== 'resume') return { kind: 'none' };
  const resumed = plan.attempt;
  if (resumed.state === 'prepared') return { kind: 'resend', attempt: resumed };
  // Files committed, item not yet marked done (a kill between the two): trust them if intact,
  // rather than fetching a job whose outputs may be gone by now.
  if (resumed.filesSaved && resumed.requestHash === hash) return { kind: 'verify', attempt: resumed };
  if (resumed.jobStatus === 'queued' || resumed.jobStatus === 'running')
    return { kind: 'watch', attempt: resumed };
  return { kind: 'refetch', attempt: resumed };
}

async function refetchJobs(run: RunContext, attempts: AttemptRecord[]): Promise<void> {
  const { client, ledger, observer } = run.deps;
  const fetching = new Set(attempts.flatMap((attempt) => (attempt.jobId === null ? [] : [attempt.jobId])));
  for (const attempt of attempts) {
    if (attempt.jobId === null) {
      await recoverLostCopy(run, attempt, fetching);
      continue;
    }
    try {
      const answer = await client.getJob(attempt.jobId);
      handleJob(
        run,
        await ledger.recordJob(attempt.id, jobSnapshot(answer.data)),
        answer.data,
        answer.retryAfter,
      );
    } catch (error) {
      if (isJobUnknown(error)) {
        jobUnknown(run, attempt.jobId!, attempt);
      } else {
        observer.log(
          'warn',
          `${attempt.itemId}: could not fetch job ${attempt.jobId}: ${(error as Error).message}; re-run to retry`,
        );
      }
    }
  }
}

/**
 * An attempt with no recorded answer goes out again with its own key and body. Past the service's
 * key memory, its job is first looked for in GET /jobs, so a forgotten key cannot pay twice.
 */
export async function resumeUnanswered(run: RunContext, attempt: AttemptRecord): Promise<void> {
  const { clock, client, ledger, manifest, observer } = run.deps;
  if (keyMayBeForgotten(attempt, clock.now())) {
    run.state.postStarted();
    try {
      const job = await findJobOfAttempt(client, manifest.name, attempt);
      if (job) {
        observer.log(
          'info',
          `${attempt.itemId}: found job ${job.id} of an old unanswered submission; adopting it`,
        );
        handleJob(run, await ledger.recordAccepted(attempt.id, null, jobSnapshot(job)), job);
        return;
      }
    } catch (error) {
      observer.log(
        'error',
        `${attempt.itemId}: an unanswered submission is older than 23 hours and the job list could not be read (${(error as Error).message}); not resending it blindly, re-run later`,
      );
      return;
    } finally {
      run.state.postEnded();
    }
  }
  await sendAttempt(run, attempt, run.capComesFromBudget(attempt.itemId));
}

/** The manifest asks for more jobs at once than the workspace may run: the limit wins, said once. */
export function concurrencyAboveLimit(asked: number, limit: number): string {
  return (
    `the manifest's concurrency (${asked}) is above the service's limit for this workspace ` +
    `(${limit} job${limit === 1 ? '' : 's'} at a time): the run keeps at most ${limit} in flight`
  );
}

/** Learns the workspace's slot limit; a refused key or wallet stops the run before it submits. */
export async function readAccount(run: RunContext): Promise<void> {
  try {
    // The pre-flight read it a moment ago: asking again would tell nothing new for one request.
    const data = run.options.account ?? (await run.deps.client.getAccount()).data;
    const limit = data.concurrency.limit;
    const asked = run.deps.manifest.concurrency;
    run.state.setSlotLimit(Math.min(asked ?? limit, limit));
    if (asked !== null && asked > limit) run.deps.observer.log('warn', concurrencyAboveLimit(asked, limit));
    if (!data.balance.enabled)
      run.deps.observer.log('warn', 'the API wallet is not enabled; submissions will be refused');
  } catch (error) {
    const refusal = accountRefusal(error);
    if (refusal) {
      run.stopWith(refusal, `the service refused the account: ${refusal.message}`);
      return;
    }
    run.deps.observer.log(
      'warn',
      `could not read the account (${(error as Error).message}); assuming ${run.state.slotLimit} slot(s)`,
    );
  }
}
