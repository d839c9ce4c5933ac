import { ApiConnectionError, ApiError } from '../api/errors.js';

/**
 * Every retry rule of runner-spec §3 in one place, as pure functions over plain values.
 */

/** What to do with the answer to a POST /videos/generation. */
export type SubmitDecision =
  | { kind: 'resend'; delayMs: number; reason: string; slotsBusy: boolean }
  | { kind: 'item_failed'; code: string; message: string }
  | { kind: 'account_refused'; code: string; message: string };

export interface BackoffOptions {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 250, capMs: 30_000 };

/** Full jitter: uniform in [0, min(cap, base * 2^n)). `random` is injected so tests are exact. */
export function backoffDelay(
  failures: number,
  random: () => number,
  options: BackoffOptions = DEFAULT_BACKOFF,
): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.min(failures, 30));
  return Math.floor(random() * ceiling);
}

/**
 * Classifies a failed POST. `failures` counts consecutive resend-worthy failures of this attempt.
 * Only an HTTP error proves no job was created; anything else may hide a stored job, so it is
 * resent with the same key and body, which the service answers idempotently.
 */
export function decideSubmitError(
  error: unknown,
  failures: number,
  random: () => number,
  fallbackRetryAfterMs: number,
): SubmitDecision {
  if (error instanceof ApiError) {
    const code = error.code ?? `http_${error.status}`;
    if (error.status === 429) {
      const delayMs = error.retryAfter === null ? fallbackRetryAfterMs : error.retryAfter * 1000;
      return { kind: 'resend', delayMs, reason: `429 ${code}`, slotsBusy: true };
    }
    if (error.status >= 500 || error.status === 408) {
      return {
        kind: 'resend',
        delayMs: backoffDelay(failures, random),
        reason: `${error.status} ${code}`,
        slotsBusy: false,
      };
    }
    if (error.status === 401 || error.status === 402) {
      return { kind: 'account_refused', code, message: error.message };
    }
    if (error.status === 409) {
      return {
        kind: 'item_failed',
        code,
        message: `the service says this attempt's idempotency key was used for a different request (${error.message}); mediabatch will not submit this item under a new key on its own: inspect the ledger's events, then edit the item to retry it`,
      };
    }
    return { kind: 'item_failed', code, message: error.message };
  }
  if (error instanceof ApiConnectionError) {
    return {
      kind: 'resend',
      delayMs: backoffDelay(failures, random),
      reason: error.message,
      slotsBusy: false,
    };
  }
  throw error;
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
  return !(decision.kind === 'account_refused' && earlierSendUnanswered);
}

/** What to do when a job reached `failed` or `canceled`. */
export type JobFailureDecision =
  | { kind: 'resubmit'; delayMs: number }
  | { kind: 'item_failed'; code: string };

const RESUBMIT_CODES = new Set(['model_busy', 'provider_unavailable', 'processing_failed', 'timeout']);

/**
 * model_busy waits about 30 s: three poll intervals, which is 30 s at the service's current
 * Retry-After of 10 s and scales down with a faster sandbox. Other retryable codes go at once.
 */
export function decideJobFailure(
  code: string,
  retriesUsed: number,
  retries: number,
  pollIntervalMs: number,
): JobFailureDecision {
  if (!RESUBMIT_CODES.has(code)) return { kind: 'item_failed', code };
  if (retriesUsed >= retries) return { kind: 'item_failed', code: 'retries_exhausted' };
  return { kind: 'resubmit', delayMs: code === 'model_busy' ? 3 * pollIntervalMs : 0 };
}

/** Failures that a later run may try again without the manifest changing. */
export function isRetryableOnRerun(code: string | null): boolean {
  return code === 'retries_exhausted' || code === null || RESUBMIT_CODES.has(code);
}

/** An unanswered attempt older than this may have a forgotten key: reconcile through GET /jobs first. */
export const KEY_MEMORY_MS = 23 * 60 * 60 * 1000;
