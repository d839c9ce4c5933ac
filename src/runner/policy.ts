import { ApiConnectionError, ApiError } from '../errors.js';

/**
 * Every retry and backoff rule of the runner, as data and pure functions over plain values: what
 * to do after each answer to a POST, after a failed job, and after a failed download. When a run
 * stops altogether is stop-rules.ts.
 * `docs/architecture.md` points here for "what happens after a 500 on a POST" and "when is a
 * download retried".
 */

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
  const code = error.code;
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

// Downloads -----------------------------------------------------------------------------------

/** Between tries of one job's downloads, each preceded by a fresh GET of the job. */
export const DOWNLOAD_BACKOFF: BackoffOptions = { baseMs: 500, capMs: 10_000 };

/**
 * Tries per download. Our own disk failing (full, unwritable) needs the user, so few; a failed
 * transfer (cut, timeout, outage) leaves the output on the service, so persist longer.
 */
const DOWNLOAD_TRIES = { local: 4, network: 10, store_unreachable: 40 } as const;

/**
 * Why a save failed, for its retries: `store_unreachable` is an S3 endpoint that does not answer
 * (restarting, a network cut): waited out like an outage of the service, about 15 minutes with
 * the longer backoff, while the output stays on the service.
 */
export type DownloadRetryCause = keyof typeof DOWNLOAD_TRIES;

const STORE_UNREACHABLE_BACKOFF: BackoffOptions = { baseMs: 1_000, capMs: 30_000 };

export type DownloadRetryDecision = { kind: 'retry'; delayMs: number } | { kind: 'give_up' };

export function decideDownloadRetry(
  tries: number,
  cause: DownloadRetryCause,
  random: () => number,
): DownloadRetryDecision {
  if (tries >= DOWNLOAD_TRIES[cause]) return { kind: 'give_up' };
  const backoff = cause === 'store_unreachable' ? STORE_UNREACHABLE_BACKOFF : DOWNLOAD_BACKOFF;
  return { kind: 'retry', delayMs: backoffDelay(tries, random, backoff) };
}

// Notifications ---------------------------------------------------------------------------------

/** Between tries of a notification whose receiver failed or did not answer (src/notify/deliver.ts). */
export const NOTIFY_BACKOFF: BackoffOptions = { baseMs: 250, capMs: 8_000 };
