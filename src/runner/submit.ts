import { ApiError } from '../errors.js';
import type { Admission, AttemptRecord } from '../ledger/index.js';
import { parseUsd } from '../money.js';
import type { Job } from '../service-client/schemas.js';
import { type PricesSeen, pricesSeenOf, type Reservation, reserveBudget } from './budget.js';
import { shortfallWords } from './budget-words.js';
import { noPromptLeft } from './fallback-steps.js';
import { newIdempotencyKey } from './idempotency.js';
import { handleJob } from './job-outcome.js';
import { jobSnapshot } from './job-snapshot.js';
import { decideSubmitError, refusalSettlesAttempt, type SubmitDecision } from './policy.js';
import { buildRequestBody, requestHash } from './request.js';
import type { RunContext } from './run-context.js';
import { admitShared } from './shared-admit.js';
import { aheadOf, SharedWork } from './shared-runners.js';
import { isOutage } from './stop-rules.js';

type Reserved = Extract<Reservation, { kind: 'reserved' }>;

/**
 * Starts as many submissions as free slots, budget and the 429 gate allow. Their attempts are
 * made durable together, with one disk sync, before any of their POSTs goes out. Says whether a
 * shared batch's room, not this run's, held some back (other runners free it without a word to
 * this one), or whether other runners had some of the items offered: either way the loop tries
 * again shortly (NO_ROOM_RETRY_MS).
 */
export async function fillSlots(run: RunContext): Promise<boolean> {
  const { state } = run;
  const now = run.deps.clock.now();
  if (state.stop || !state.queue.gateOpen(now)) return false;
  const batch: Array<{ itemId: string; reservation: Reserved }> = [];
  // Until a check of your own has given a verdict, a take being saved and checked holds its slot:
  // a check that cannot run (a timeout) stops the run before the next take is bought.
  const checksUnproven = (run.options.ownChecks?.checks.length ?? 0) > 0 && !run.checks.ownVerdictSeen;
  const ownFree = underUnsavedBound(run, checksUnproven);
  // Nothing ready to go (all queued items wait, or none is queued): no count of the batch's room.
  const free =
    run.shared && state.queue.hasReady(now)
      ? await run.shared.offerNow(ownFree, state.slotLimit, state.unfinished, now)
      : ownFree;
  let budget = await run.budgetState();
  // Read once per pass, and only when an item is refused: a handful of rows, one per kind of request.
  let prices: PricesSeen | null | undefined;
  for (const itemId of state.queue.ready(now)) {
    if (batch.length >= free) break;
    const tracked = state.item(itemId)!;
    if (run.rejections.next(tracked.item) === null) {
      state.queue.remove(itemId);
      if (await decidedHere(run, itemId)) noPromptLeft(run, itemId);
      continue;
    }
    const reservation = reserveBudget(budget, tracked.item.maxCostMicros, tracked.refusedCapMicros);
    if (reservation.kind === 'no_room') {
      // Refunds and unanswered reservations may still free room; decide only when nothing can change.
      if (state.unfinished === 0 && batch.length === 0 && othersHoldNoReservation(run, budget)) {
        state.queue.remove(itemId);
        if (!(await decidedHere(run, itemId))) continue;
        prices ??= pricesSeenOf((await run.deps.ledger.priceSamples()).map((sample) => sample.amountMicros));
        const words = shortfallWords({
          capMicros: tracked.item.maxCostMicros,
          leftMicros: reservation.remainingMicros,
          prices,
        });
        if (state.cancelRedo(itemId)) {
          // A redo that does not fit leaves the item as it was: done, its take kept; a re-roll
          // (failed-take.ts) leaves it checks_failed, its takes kept.
          const rerolled = tracked.record.state === 'checks_failed';
          const { errorCode, errorMessage } = tracked.record;
          if (rerolled) run.setItem(itemId, 'checks_failed', { errorCode, errorMessage });
          else run.setItem(itemId, 'done');
          run.deps.observer.log(
            'warn',
            `${itemId}: the ${rerolled ? 're-roll' : 'redo'} ${words}; its take stays`,
          );
          continue;
        }
        if (leftAsItWas(run, itemId, words)) continue;
        run.setItem(itemId, 'budget_exceeded', { errorCode: 'budget_exceeded', errorMessage: words });
      }
      continue;
    }
    state.queue.remove(itemId);
    batch.push({ itemId, reservation });
    budget = { ...budget, reservedMicros: budget.reservedMicros + reservation.reserveMicros };
  }
  if (batch.length > 0) {
    // The items this run would offer next: the admission says which another runner took.
    const ahead = run.shared
      ? aheadOf(
          state.queue.ready(now),
          SharedWork.lookAhead(batch.length),
          (id) => state.item(id)?.latest?.seq ?? 0,
        )
      : [];
    // Offered items another runner had done or taken leave this run's slots free: the next queued
    // ones go shortly, not at the next lease renewal. A runner kept from the batch's slots while the
    // others worked found thousands of its queued items done, and cleared them 600 (its offer and
    // its look ahead) a renewal, ten seconds each, while the batch's last items waited behind them.
    if ((await startAttempts(run, batch, ahead)) < batch.length) return true;
  }
  return free < ownFree && batch.length === free;
}

/**
 * This run's free slots, as many as the bound on outputs paid for and not yet saved leaves
 * (unsaved.ts): at the bound nothing is submitted until saving catches up, and the run says so
 * when that starts and when it ends.
 */
function underUnsavedBound(run: RunContext, checksUnproven: boolean): number {
  const { state } = run;
  const unsaved = run.downloads.activeCount + run.downloads.queuedCount;
  const slots = state.freeSlots(unsaved, checksUnproven);
  const room = run.unsaved.room(state.slotLimit, state.unfinished, unsaved);
  const held = room < slots && state.queue.length > 0;
  if (run.unsaved.hold(held)) {
    const bound = run.unsaved.bound(state.slotLimit);
    run.deps.observer.log(
      'info',
      held
        ? `saving first: ${state.unfinished + unsaved} outputs paid for and not yet saved, the most the run holds at once (${bound}); submitting again as saving catches up`
        : 'saving caught up: submitting again',
    );
  }
  return Math.min(slots, room);
}

async function startAttempts(
  run: RunContext,
  batch: ReadonlyArray<{ itemId: string; reservation: Reserved }>,
  ahead: Admission['ahead'],
): Promise<number> {
  const { manifest, ledger, observer } = run.deps;
  const fresh = batch.map(({ itemId, reservation }) => {
    const tracked = run.state.item(itemId)!;
    const seq = (tracked.latest?.seq ?? 0) + 1;
    return {
      itemId,
      seq,
      idempotencyKey: newIdempotencyKey(),
      // Its next prompt's request: its own, or past those moderation rejected a fallback (fallback.ts).
      requestBody: buildRequestBody(
        manifest.name,
        run.rejections.asSent(tracked.item),
        seq,
        reservation.maxCostMicros,
      ),
      // The manifest's hash, not tracked.hash: an item kept at its recorded hash because only its
      // max_cost_usd changed (currentRequest) sends the new cap, and from here on the attempt and
      // the item's row say so, so that later runs and plans need no body read for it.
      requestHash: requestHash(tracked.item),
      reservedMicros: reservation.reserveMicros,
      take: run.state.takeForNewAttempt(itemId),
      vars: tracked.item.vars ? JSON.stringify(tracked.item.vars) : null,
    };
  });
  // The keys and the exact bodies are durable before the POSTs: a kill after one resends the same pair.
  const attempts = run.shared ? await admitShared(run, fresh, ahead) : await ledger.prepareAttempts(fresh);
  const capFromBudget = new Map(batch.map((entry) => [entry.itemId, entry.reservation.capFromBudget]));
  for (const attempt of attempts) {
    run.state.attemptPrepared(attempt);
    // An item sent only on request gets its row now that it is sent (unsent-items.ts).
    if (run.state.unsent.release(attempt.itemId))
      run.background(ledger.putItems([run.state.item(attempt.itemId)!.record]));
    observer.itemChanged(attempt.itemId, 'in_flight', null, run.state.countByState());
    run.state.sendsBegan(attempt.id);
    run.background(sendAttempt(run, attempt, capFromBudget.get(attempt.itemId) ?? false));
  }
  return attempts.length;
}

/**
 * An item sent only on request (an expired one to generate again, a failed one to retry) that does
 * not fit in the budget keeps the row the ledger had: a plain run pays for it no more than before.
 */
function leftAsItWas(run: RunContext, itemId: string, words: string): boolean {
  const row = run.state.unsent.release(itemId);
  if (row === undefined) return false;
  run.state.changeItem(itemId, row.state, row);
  run.deps.observer.itemChanged(itemId, row.state, row.errorCode, run.state.countByState());
  run.deps.observer.log('warn', `${itemId}: not sent: it ${words}; it stays ${row.state}`);
  return true;
}

/**
 * An item decided without being sent (over budget) is decided by this runner only if no other
 * runner of a shared ledger works it: else that runner's record of it stands.
 */
async function decidedHere(run: RunContext, itemId: string): Promise<boolean> {
  const shared = run.shared;
  if (shared === null) return true;
  if (await shared.claims.claimUnsent(itemId, run.state.item(itemId)?.latest?.seq ?? 0)) return true;
  shared.elsewhere(itemId);
  return false;
}

/** Other runners' unanswered POSTs may still release budget: no item is refused until they are answered. */
function othersHoldNoReservation(run: RunContext, budget: { reservedMicros: number }): boolean {
  return run.shared === null || budget.reservedMicros === 0;
}

/**
 * Sends a committed attempt until the service gives an answer that decides it. The same key and
 * body go out every time, so a job stored behind a 500 or a dropped connection is replayed, not
 * paid twice.
 */
export async function sendAttempt(
  run: RunContext,
  attempt: AttemptRecord,
  capFromBudget: boolean,
): Promise<void> {
  run.state.postStarted();
  try {
    // A send still waiting its turn when the run failed stays unsent: its key and body are in the
    // ledger, and the next run sends them first.
    await run.postLimit(() => (run.failed ? undefined : sendUntilDecided(run, attempt, capFromBudget)));
  } finally {
    run.state.sendUnanswered(attempt.id);
    run.state.postEnded();
    run.wake();
  }
}

async function sendUntilDecided(
  run: RunContext,
  attempt: AttemptRecord,
  capFromBudget: boolean,
): Promise<void> {
  const { client, ledger, clock, random } = run.deps;
  for (let failures = 0; ; ) {
    let job: Job;
    try {
      run.state.budget.sent(run.deps.clock.now(), false);
      const answer = await client.createVideoJob(attempt.requestBody, attempt.idempotencyKey);
      run.serviceAnswered();
      job = answer.data;
      run.state.learnRetryAfter(answer.retryAfter);
      handleJob(run, await ledger.recordAccepted(attempt.id, answer.status, jobSnapshot(job)), job);
      return;
    } catch (error) {
      if (!isOutage(error) && error instanceof ApiError) run.serviceAnswered();
      const decision = decideSubmitError(error, failures, random, run.pollIntervalMs);
      if (decision.kind !== 'resend') {
        await settleRefusal(run, attempt, decision, error as { status: number }, capFromBudget);
        return;
      }
      if (decision.slotsBusy) {
        run.state.queue.closeGate(clock.now() + decision.delayMs);
        if (await dropWhenStopping(run, attempt, error)) return;
      } else {
        failures += 1;
        run.state.sendUnanswered(attempt.id);
        run.serviceUnanswered(decision.reason);
      }
      await clock.sleep(decision.delayMs, run.stopSignal);
      if (decision.slotsBusy && (await dropWhenStopping(run, attempt, error))) return;
      // A stopping run does not keep resending: the attempt stays unanswered in the ledger, and the
      // next run resends it with the same key and body first, so Ctrl-C works during an outage.
      if ((!decision.slotsBusy && run.state.stop) || run.failed) return;
    }
  }
}

/** Acts on an HTTP refusal that decides the attempt: no job was created by this send. */
async function settleRefusal(
  run: RunContext,
  attempt: AttemptRecord,
  decision: Exclude<SubmitDecision, { kind: 'resend' }>,
  error: { status: number },
  capFromBudget: boolean,
): Promise<void> {
  const { ledger, observer } = run.deps;
  // Only an attempt whose every earlier send was answered (429s) is settled by a 401/402.
  const settled = refusalSettlesAttempt(decision, !run.state.onlyRefusedSoFar(attempt.id));
  if (settled) await ledger.recordRejected(attempt.id, error.status, decision.code, decision.message);
  if (decision.kind === 'account_refused' || decision.kind === 'service_route') {
    // The same for every item: the item waits for the next run as it was, the run stops submitting.
    if (settled) run.setItem(attempt.itemId, 'pending');
    run.stopWith(
      decision,
      decision.kind === 'account_refused'
        ? `the service refused the account (${decision.message}); no new submissions`
        : `the service has no route for submissions (${decision.message}); no new submissions: check \`baseUrl\``,
    );
    return;
  }
  if (decision.code === 'max_cost_exceeded' && capFromBudget) {
    // The cap was what was left of the budget, so the job simply does not fit (yet): it waits
    // until more than that cap is left (a refund), else ends budget_exceeded, never resending
    // the same refused request in a loop.
    const refused = parseUsd(String(JSON.parse(attempt.requestBody).max_cost_usd ?? '')) ?? 0;
    run.state.capRefused(attempt.itemId, refused);
    run.enqueue(attempt.itemId);
    run.setItem(attempt.itemId, 'pending');
    return;
  }
  run.setItem(attempt.itemId, 'failed', {
    errorCode: decision.code,
    errorMessage: decision.message,
    signature: decision.signature,
  });
  if (decision.code === 'idempotency_key_reused')
    observer.log('error', `${attempt.itemId}: ${decision.message}`);
}

/**
 * A stopping run does not wait for a slot to submit new work: an attempt of this run answered
 * only with 429 has no job (a 429 creates none), so it is closed as refused and its item stays
 * pending for the next run.
 */
async function dropWhenStopping(run: RunContext, attempt: AttemptRecord, error: unknown): Promise<boolean> {
  if (!run.state.stop || !run.state.onlyRefusedSoFar(attempt.id)) return false;
  const refusal = error as { code?: string | null; message?: string };
  await run.deps.ledger.recordRejected(
    attempt.id,
    429,
    refusal.code ?? 'concurrency_limited',
    refusal.message ?? 'no free slot',
  );
  run.setItem(attempt.itemId, 'pending');
  return true;
}
