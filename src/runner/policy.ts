import { ApiConnectionError, ApiError } from '../api/errors.js';

/**
 * Every retry, backoff and stop rule of the runner, as data and pure functions over plain values:
 * what to do after each answer to a POST, after a failed job, and after a failed download.
 * `docs/architecture.md` points here for "what happens after a 500 on a POST" and "when is a
 * download retried".
 */

export type AccountRefused = { kind: 'account_refused'; code: string; message: string };

/**
 * Why a run stops submitting before every item is settled. Apart from a drain (Ctrl-C), each is
 * a cause that is the same for every item, so items are left as they were (docs/services.md).
 */
export type StopReason =
  | AccountRefused
  | { kind: 'draining' }
  /** The service does not know jobs this ledger holds: they disagree, and resubmitting could pay twice. */
  | { kind: 'ledger_disagrees'; jobs: ReadonlyArray<{ jobId: string; itemId: string }> }
  /** The service has no such route (404 on a POST or a listing): the address, not an item. */
  | { kind: 'service_route'; code: string; message: string }
  /** Several different items in a row failed with the same final code. */
  | { kind: 'stop_loss'; signature: string; items: readonly string[] };

/** Which stop a run reports when several apply: the one that asks most of the user. */
const STOP_RANK: Readonly<Record<StopReason['kind'], number>> = {
  draining: 0,
  stop_loss: 1,
  service_route: 2,
  ledger_disagrees: 3,
  account_refused: 4,
};

/**
 * The stop in force after `next` happens. A higher rank replaces a lower one (a refused account
 * outranks a drain); unknown jobs add up, so the message names them all; otherwise the first stays.
 */
export function combineStops(current: StopReason | null, next: StopReason): StopReason {
  if (current === null) return next;
  if (current.kind === 'ledger_disagrees' && next.kind === 'ledger_disagrees') {
    const known = new Set(current.jobs.map((job) => job.jobId));
    return {
      kind: 'ledger_disagrees',
      jobs: [...current.jobs, ...next.jobs.filter((job) => !known.has(job.jobId))],
    };
  }
  return STOP_RANK[next.kind] > STOP_RANK[current.kind] ? next : current;
}

// Backoff -------------------------------------------------------------------------------------

export interface BackoffOptions {
  baseMs: number;
  capMs: number;
}

/** Resends of an unanswered POST: an overnight batch waits out an outage instead of giving up. */
export const SUBMIT_BACKOFF: BackoffOptions = { baseMs: 250, capMs: 30_000 };

/** Full jitter: uniform in [0, min(cap, base * 2^n)). `random` is injected so tests are exact. */
export function backoffDelay(
  failures: number,
  random: () => number,
  options: BackoffOptions = SUBMIT_BACKOFF,
): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.min(failures, 30));
  return Math.floor(random() * ceiling);
}

// Answers to a POST ---------------------------------------------------------------------------

/** What to do with the answer to a POST /videos/generation. */
export type SubmitDecision =
  | { kind: 'resend'; delayMs: number; reason: string; slotsBusy: boolean }
  /** `signature` is what the stop-loss compares: the code, and the field it names if any. */
  | { kind: 'item_failed'; code: string; message: string; signature: string }
  | { kind: 'account_refused'; code: string; message: string }
  | { kind: 'service_route'; code: string; message: string };

type SubmitAction =
  | 'wait_for_slot'
  | 'resend_with_backoff'
  | 'refuse_account'
  | 'stop_no_route'
  | 'fail_loudly'
  | 'fail_item';

/**
 * HTTP statuses to actions, first match wins. Only an HTTP error proves that no job was created;
 * every other failure may hide a stored job, so it is resent with the same key and body, which
 * the service answers idempotently.
 */
const SUBMIT_RULES: ReadonlyArray<{ when: (status: number) => boolean; action: SubmitAction }> = [
  { when: (status) => status === 429, action: 'wait_for_slot' },
  { when: (status) => status >= 500 || status === 408, action: 'resend_with_backoff' },
  { when: (status) => status === 401 || status === 402, action: 'refuse_account' },
  // The service defines no 404 for a submission: it is the address, the same for every item.
  { when: (status) => status === 404, action: 'stop_no_route' },
  { when: (status) => status === 409, action: 'fail_loudly' },
  { when: () => true, action: 'fail_item' },
];

/**
 * Classifies a failed POST. `failures` counts consecutive resend-worthy failures of this attempt;
 * `fallbackRetryAfterMs` stands in for a 429 that names no Retry-After.
 */
export function decideSubmitError(
  error: unknown,
  failures: number,
  random: () => number,
  fallbackRetryAfterMs: number,
): SubmitDecision {
  if (error instanceof ApiConnectionError) {
    return {
      kind: 'resend',
      delayMs: backoffDelay(failures, random),
      reason: error.message,
      slotsBusy: false,
    };
  }
  if (!(error instanceof ApiError)) throw error;
  const code = error.code ?? `http_${error.status}`;
  const rule = SUBMIT_RULES.find((candidate) => candidate.when(error.status))!;
  switch (rule.action) {
    case 'wait_for_slot': {
      const delayMs = error.retryAfter === null ? fallbackRetryAfterMs : error.retryAfter * 1000;
      return { kind: 'resend', delayMs, reason: `429 ${code}`, slotsBusy: true };
    }
    case 'resend_with_backoff':
      return {
        kind: 'resend',
        delayMs: backoffDelay(failures, random),
        reason: `${error.status} ${code}`,
        slotsBusy: false,
      };
    case 'refuse_account':
      return { kind: 'account_refused', code, message: error.message };
    case 'stop_no_route':
      return { kind: 'service_route', code, message: error.message };
    case 'fail_loudly':
      return {
        kind: 'item_failed',
        code,
        signature: code,
        message: `the service says this attempt's idempotency key was used for a different request (${error.message}); mediabatch will not submit this item under a new key on its own: inspect the ledger's events, then edit the item to retry it`,
      };
    case 'fail_item':
      return {
        kind: 'item_failed',
        code,
        signature: error.param ? `${code} on ${error.param}` : code,
        message: error.message,
      };
  }
}

/**
 * Whether a refusal settles the attempt (recorded rejected: no job, reservation freed). A refusal
 * answers only the send that got it. 401 and 402 depend on the key and the wallet at that moment,
 * so if an earlier send of the same key went unanswered (in this run, or in a run that was killed)
 * it may have created and charged the job: the attempt then stays unanswered and the next run
 * resends it first, which replays that job if it exists. A 400 or 409 judges the request itself,
 * which every send repeats byte for byte.
 */
export function refusalSettlesAttempt(decision: SubmitDecision, earlierSendUnanswered: boolean): boolean {
  return !(
    (decision.kind === 'account_refused' || decision.kind === 'service_route') &&
    earlierSendUnanswered
  );
}

/** The stop a 401 or 402 on any call means: the key or the wallet, the same for every item. */
export function accountRefusal(error: unknown): AccountRefused | null {
  if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 402)) return null;
  return { kind: 'account_refused', code: error.code ?? `http_${error.status}`, message: error.message };
}

// Failed jobs ---------------------------------------------------------------------------------

/** What to do when a job reached `failed` or `canceled`. */
export type JobFailureDecision =
  | { kind: 'resubmit'; delayMs: number }
  | { kind: 'item_failed'; code: string };

/** The service asks for about 30 s before a model_busy job is resubmitted, whatever the poll interval. */
export const MODEL_BUSY_DELAY_MS = 30_000;

/** Job error codes that a new attempt (new key) may cure, and how long to wait before it. */
const RESUBMIT_DELAY: Readonly<Record<string, 'model_busy' | 0>> = {
  model_busy: 'model_busy',
  provider_unavailable: 0,
  processing_failed: 0,
  timeout: 0,
};

/**
 * `modelBusyDelayMs` is MODEL_BUSY_DELAY_MS in every real run; only the test harness shortens it
 * (MEDIABATCH_MODEL_BUSY_SECONDS, docs/services.md), so that tests of the rule stay fast.
 */
export function decideJobFailure(
  code: string,
  retriesUsed: number,
  retries: number,
  modelBusyDelayMs: number = MODEL_BUSY_DELAY_MS,
): JobFailureDecision {
  // Own keys only: a code such as `constructor` must not find Object.prototype's member.
  const delay = Object.hasOwn(RESUBMIT_DELAY, code) ? RESUBMIT_DELAY[code] : undefined;
  if (delay === undefined) return { kind: 'item_failed', code };
  if (retriesUsed >= retries) return { kind: 'item_failed', code: 'retries_exhausted' };
  return { kind: 'resubmit', delayMs: delay === 'model_busy' ? modelBusyDelayMs : delay };
}

/** Failures that a later run may try again without the manifest changing. */
export function isRetryableOnRerun(code: string | null): boolean {
  return code === 'retries_exhausted' || code === null || Object.hasOwn(RESUBMIT_DELAY, code);
}

/** A 409 is never retried under a new key on its own, not even by --retry-failed. */
export function mayRetryFailed(code: string | null): boolean {
  return code !== 'idempotency_key_reused';
}

// Stop-loss -----------------------------------------------------------------------------------

/** Different items failing in a row with the same code before the run stops submitting. */
export const STOP_LOSS_STREAK = 3;

/**
 * Codes that judge one item's own content, so that a run of them says nothing about the rest:
 * they never count towards the stop-loss.
 */
const PER_ITEM_CODES = new Set(['content_rejected']);

/** Items that failed one after another with the same signature; any other final outcome resets it. */
export interface FailureStreak {
  signature: string | null;
  items: readonly string[];
}

export const NO_STREAK: FailureStreak = { signature: null, items: [] };

/** Folds one item's final outcome (`failure` null: done) into the streak. */
export function extendStreak(streak: FailureStreak, itemId: string, failure: string | null): FailureStreak {
  if (failure === null || PER_ITEM_CODES.has(failure.split(' ')[0]!)) return NO_STREAK;
  if (failure !== streak.signature) return { signature: failure, items: [itemId] };
  if (streak.items.includes(itemId)) return streak;
  return { signature: failure, items: [...streak.items, itemId] };
}

/** The stop-loss: enough different items in a row failed alike to stop before submitting the rest. */
export type StopLoss = Extract<StopReason, { kind: 'stop_loss' }>;

export function stopLoss(streak: FailureStreak, limit: number = STOP_LOSS_STREAK): StopLoss | null {
  if (streak.signature === null || streak.items.length < limit) return null;
  return { kind: 'stop_loss', signature: streak.signature, items: streak.items };
}

// Outages -------------------------------------------------------------------------------------

/** While the service does not answer, one line says so at most this often. */
export const OUTAGE_REPORT_EVERY_MS = 60_000;

/** Whether a failed request is part of an outage (no answer, or the service failing as a whole). */
export function isOutage(error: unknown): boolean {
  if (error instanceof ApiConnectionError) return error.kind === 'network';
  return error instanceof ApiError && (error.status >= 500 || error.status === 408);
}

/** Whether the outage line is due: at its start, then once per OUTAGE_REPORT_EVERY_MS. */
export function outageReportDue(lastReportAt: number | null, now: number): boolean {
  return lastReportAt === null || now - lastReportAt >= OUTAGE_REPORT_EVERY_MS;
}

/** `2m10s`, `45s`, `1h02m`: how long an outage has lasted, for people. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

// Downloads -----------------------------------------------------------------------------------

/** Between tries of one job's downloads, each preceded by a fresh GET of the job. */
export const DOWNLOAD_BACKOFF: BackoffOptions = { baseMs: 500, capMs: 10_000 };

/**
 * Tries per download. Our own disk failing (full, unwritable) needs the user, so few; a failed
 * transfer (cut, timeout, outage) leaves the output on the service, so persist longer.
 */
const DOWNLOAD_TRIES = { local: 4, network: 10 } as const;

export type DownloadRetryDecision = { kind: 'retry'; delayMs: number } | { kind: 'give_up' };

export function decideDownloadRetry(
  tries: number,
  cause: 'local' | 'network',
  random: () => number,
): DownloadRetryDecision {
  if (tries >= DOWNLOAD_TRIES[cause]) return { kind: 'give_up' };
  return { kind: 'retry', delayMs: backoffDelay(tries, random, DOWNLOAD_BACKOFF) };
}
