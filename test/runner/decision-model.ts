import { ApiConnectionError, ApiError } from '../../src/errors.js';
import type { AttemptRecord, ItemRecord, ItemState } from '../../src/ledger/records.js';
import { parseUsd } from '../../src/money.js';
import { type BudgetState, reserveBudget } from '../../src/runner/budget.js';
import { latestAttempts, planItem, retriesCarried } from '../../src/runner/item-plan.js';
import { decideJobFailure, decideSubmitError, refusalSettlesAttempt } from '../../src/runner/policy.js';
import { blankItem, Crash, jobPatch, LedgerModel } from './ledger-model.js';
import { type ServiceJob, ServiceModel } from './service-model.js';

/**
 * The runner's shell reduced to its decisions: the same calls into the pure core (reserveBudget,
 * decideSubmitError, decideJobFailure, planItem) in the same order as submit.ts, job-outcome.ts and
 * restore.ts, over a ledger-like durable state that survives crashes and a volatile state that
 * does not. A crash can be armed to strike right after any durable write.
 */
export interface ItemSpec {
  id: string;
  hash: string;
  capMicros: number | null;
  costMicros: number;
}

export interface WorldConfig {
  items: ItemSpec[];
  budgetMicros: number | null;
  retries: number;
  slotLimit: number;
  /** The service checks the wallet before it looks the Idempotency-Key up. */
  billingFirst: boolean;
}

const FINAL: ReadonlySet<ItemState> = new Set(['done', 'failed', 'budget_exceeded', 'expired']);

/** The service's refusal of a POST, as the client throws it. */
export const apiError = (status: number, code: string) =>
  new ApiError({
    status,
    type: null,
    serviceCode: code,
    param: null,
    requestId: null,
    retryAfter: 1,
    message: code,
  });

export class World {
  readonly ledger = new LedgerModel();
  readonly service: ServiceModel;
  queue: string[] = [];
  /** Attempts being sent; `fresh`: prepared by this run, so no send of it went out before. */
  posting = new Map<number, { failures: number; capFromBudget: boolean; fresh: boolean }>();
  watching = new Set<number>();
  downloads = new Set<number>();
  stop = false;
  refusedCap = new Map<string, number>();
  runs = 0;
  /** Item -> key sent without an answer yet: the next send for that item must use it. */
  readonly unresolved = new Map<string, string>();
  /** Resubmissions after a job failure since the item was new or final (a later run may retry). */
  readonly resubmits = new Map<string, number>();
  readonly freshStart = new Set<string>();
  /** Paths this world went through, so the test can show it is not vacuous. */
  readonly seen = new Set<string>();

  constructor(readonly config: WorldConfig) {
    this.service = new ServiceModel(config.billingFirst);
    this.guard(() => this.#restore());
  }

  spec(itemId: string): ItemSpec {
    return this.config.items.find((item) => item.id === itemId)!;
  }

  attempt(id: number): AttemptRecord {
    return this.ledger.attempt(id);
  }

  /** Runs one step; a crash striking inside it drops the run's memory and restarts. */
  guard(step: () => void, deliverInFlight = false): void {
    try {
      step();
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
      this.crash(deliverInFlight);
    }
  }

  crash(deliverInFlight: boolean): void {
    this.seen.add('crash');
    for (;;) {
      for (const id of this.posting.keys()) {
        const attempt = this.attempt(id);
        if (attempt.state !== 'prepared') continue;
        this.unresolved.set(attempt.itemId, attempt.idempotencyKey);
        // The POST left before the kill: the service stores the job, the answer is lost.
        if (deliverInFlight) this.service.post(attempt, '500-after', this.spec(attempt.itemId).costMicros);
      }
      try {
        this.#restore();
        return;
      } catch (error) {
        if (!(error instanceof Crash)) throw error;
      }
    }
  }

  setItem(itemId: string, state: ItemState, extra: { errorCode?: string; retriesUsed?: number } = {}): void {
    this.ledger.setItem(itemId, state, extra);
  }

  budgetState(): BudgetState {
    return this.ledger.budgetState(this.config.budgetMicros);
  }

  get unfinished(): number {
    return this.posting.size + this.watching.size;
  }

  /** BatchRun.fillSlots. */
  fillSlots(): void {
    if (this.stop) return;
    for (let i = 0; i < this.queue.length && this.unfinished < this.config.slotLimit; ) {
      const itemId = this.queue[i]!;
      const spec = this.spec(itemId);
      const reservation = reserveBudget(
        this.budgetState(),
        spec.capMicros,
        this.refusedCap.get(itemId) ?? null,
      );
      if (reservation.kind === 'no_room') {
        if (this.unfinished === 0) {
          this.queue.splice(i, 1);
          this.setItem(itemId, 'budget_exceeded', { errorCode: 'budget_exceeded' });
          continue;
        }
        i += 1;
        continue;
      }
      this.queue.splice(i, 1);
      this.#prepare(spec, reservation.reserveMicros, reservation.maxCostMicros, reservation.capFromBudget);
    }
  }

  #prepare(spec: ItemSpec, reserve: number, maxCost: number | null, capFromBudget: boolean): void {
    const latest = latestAttempts(this.ledger.attempts).get(spec.id);
    if (latest) this.#checkNewKey(latest);
    const seq = (latest?.seq ?? 0) + 1;
    const attempt = this.ledger.prepare(spec.id, spec.hash, seq, reserve, maxCost);
    this.posting.set(attempt.id, { failures: 0, capFromBudget, fresh: true });
  }

  /**
   * Property: a new key only after the service proved the last one failed: its job ended failed or
   * canceled (a resubmission, at most `retries` of them), or an HTTP refusal other than 409 while
   * no job exists for it. Never after a 409.
   */
  #checkNewKey(latest: AttemptRecord): void {
    const job = this.service.byKey(latest.idempotencyKey);
    const jobFailed =
      latest.state === 'accepted' &&
      (job?.status === 'failed' || job?.status === 'canceled') &&
      (latest.jobStatus === 'failed' || latest.jobStatus === 'canceled');
    const refused = latest.state === 'rejected' && job === undefined && latest.httpStatus !== 409;
    if (!jobFailed && !refused) {
      throw new Error(
        `${latest.itemId}: new key while ${latest.idempotencyKey} is ${latest.state} (HTTP ${latest.httpStatus}) and its job is ${job?.status ?? 'absent'}`,
      );
    }
    if (this.freshStart.delete(latest.itemId)) return;
    if (jobFailed) {
      const used = (this.resubmits.get(latest.itemId) ?? 0) + 1;
      this.resubmits.set(latest.itemId, used);
      this.seen.add('resubmission');
      if (used > this.config.retries)
        throw new Error(`${latest.itemId}: resubmission ${used} with retries ${this.config.retries}`);
    }
  }

  /** One send of an unanswered attempt and what BatchRun.#sendUntilDecided makes of the reply. */
  answer(attemptId: number, kind: string): void {
    const sending = this.posting.get(attemptId)!;
    const attempt = this.attempt(attemptId);
    const owed = this.unresolved.get(attempt.itemId);
    if (owed !== undefined && owed !== attempt.idempotencyKey)
      throw new Error(`${attempt.itemId}: sent key ${attempt.idempotencyKey} while ${owed} had no answer`);
    const reply = this.service.post(attempt, kind, this.spec(attempt.itemId).costMicros);
    if (reply.type === 'job') {
      this.unresolved.delete(attempt.itemId);
      const accepted = this.ledger.updateAttempt(attemptId, {
        state: 'accepted',
        reservedMicros: 0,
        httpStatus: 202,
        ...jobPatch(reply.job),
      });
      this.posting.delete(attemptId);
      this.handleJob(accepted, reply.job);
      return;
    }
    const error =
      reply.type === 'lost'
        ? kind.startsWith('drop')
          ? new ApiConnectionError('socket hang up')
          : apiError(500, 'internal_error')
        : apiError(reply.status, reply.code);
    const decision = decideSubmitError(error, sending.failures, () => 0.5, 100);
    if (decision.kind === 'resend') {
      if (!decision.slotsBusy) sending.failures += 1;
      if (reply.type === 'lost') this.unresolved.set(attempt.itemId, attempt.idempotencyKey);
      return;
    }
    if (reply.type !== 'http') throw new Error(`no answer decided as ${decision.kind}`);
    this.unresolved.delete(attempt.itemId);
    this.posting.delete(attemptId);
    const settled = refusalSettlesAttempt(decision, !sending.fresh || sending.failures > 0);
    if (settled)
      this.ledger.updateAttempt(attemptId, {
        state: 'rejected',
        reservedMicros: 0,
        httpStatus: reply.status,
        httpCode: reply.code,
      });
    if (!settled) this.seen.add('refusal-kept-attempt-open');
    if (decision.kind === 'account_refused') {
      if (settled) this.setItem(attempt.itemId, 'pending');
      this.stop = true;
      return;
    }
    if (decision.code === 'max_cost_exceeded' && sending.capFromBudget) {
      const refused = parseUsd(String(JSON.parse(attempt.requestBody).max_cost_usd ?? '')) ?? 0;
      this.refusedCap.set(attempt.itemId, Math.max(this.refusedCap.get(attempt.itemId) ?? 0, refused));
      this.queue.push(attempt.itemId);
      this.setItem(attempt.itemId, 'pending');
      return;
    }
    this.setItem(attempt.itemId, 'failed', { errorCode: decision.code });
  }

  /** BatchRun.handleJob and #jobFailed. */
  handleJob(attempt: AttemptRecord, job: ServiceJob): void {
    if (job.status === 'queued') {
      this.watching.add(attempt.id);
      return;
    }
    this.watching.delete(attempt.id);
    if (job.status === 'succeeded') {
      this.downloads.add(attempt.id);
      return;
    }
    const record = this.ledger.items.get(attempt.itemId)!;
    const code = job.status === 'canceled' ? 'canceled' : (job.code ?? 'unknown');
    const decision = decideJobFailure(code, record.retriesUsed, this.config.retries, 100);
    if (decision.kind === 'resubmit') {
      this.setItem(attempt.itemId, 'pending', { retriesUsed: record.retriesUsed + 1, errorCode: code });
      this.queue.push(attempt.itemId);
      return;
    }
    this.setItem(attempt.itemId, 'failed', { errorCode: decision.code });
  }

  /** pollUnfinished: jobs that left the unfinished list are fetched once and acted on. */
  poll(): void {
    for (const id of [...this.watching]) {
      const job = this.service.byKey(this.attempt(id).idempotencyKey)!;
      if (job.status === 'queued') continue;
      this.handleJob(this.ledger.updateAttempt(id, jobPatch(job)), job);
    }
  }

  download(attemptId: number): void {
    this.ledger.updateAttempt(attemptId, { filesSaved: true });
    this.downloads.delete(attemptId);
    this.setItem(this.attempt(attemptId).itemId, 'done');
  }

  /** restoreFromLedger + resumeUnanswered, with the run's memory gone. */
  #restore(): void {
    this.runs += 1;
    this.queue = [];
    this.posting = new Map();
    this.watching = new Set();
    this.downloads = new Set();
    this.stop = false;
    this.refusedCap = new Map();
    const latest = latestAttempts(this.ledger.attempts);
    const writes: ItemRecord[] = [];
    const refetch: AttemptRecord[] = [];
    for (const spec of this.config.items) {
      const existing = this.ledger.items.get(spec.id);
      const attempt = latest.get(spec.id);
      const plan = planItem(spec.hash, existing, attempt, { regenerateExpired: false });
      let record: ItemRecord = existing ?? blankItem(spec.id, spec.hash);
      if (plan.action === 'submit') {
        if (!existing || FINAL.has(existing.state)) {
          // A later run starts the item afresh: its first new key is no resubmission.
          this.resubmits.set(spec.id, 0);
          if (attempt) this.freshStart.add(spec.id);
        }
        record = {
          ...record,
          state: 'pending',
          retriesUsed: retriesCarried(plan, existing),
          errorCode: null,
          errorMessage: null,
        };
        this.queue.push(spec.id);
      } else if (plan.action === 'resume') {
        if (plan.attempt.state === 'prepared') {
          const capFromBudget = this.config.budgetMicros !== null && spec.capMicros === null;
          this.posting.set(plan.attempt.id, { failures: 0, capFromBudget, fresh: false });
        } else if (plan.attempt.jobStatus === 'queued') this.watching.add(plan.attempt.id);
        else refetch.push(plan.attempt);
      } else if (plan.label === 'failed' && record.state !== 'failed') {
        record = { ...record, state: 'failed', errorCode: plan.code };
      }
      if (record !== existing) writes.push(record);
    }
    this.ledger.putItems(writes);
    for (const attempt of refetch) {
      const job = this.service.byKey(attempt.idempotencyKey)!;
      this.handleJob(this.ledger.updateAttempt(attempt.id, jobPatch(job)), job);
    }
  }
}
