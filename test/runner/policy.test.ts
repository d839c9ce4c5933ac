import { describe, expect, it } from 'vitest';
import { ApiConnectionError, ApiError } from '../../src/errors.js';
import {
  backoffDelay,
  decideJobFailure,
  decideSubmitError,
  isRetryableOnRerun,
  MODEL_BUSY_DELAY_MS,
} from '../../src/runner/policy.js';

function apiError(status: number, code: string | null, retryAfter: number | null = null): ApiError {
  return new ApiError({
    status,
    type: null,
    serviceCode: code,
    param: null,
    requestId: 'req_1',
    retryAfter,
    message: `${status} ${code}`,
  });
}

const half = () => 0.5;

describe('decideSubmitError', () => {
  it('waits out a 429 for its Retry-After, resending the same request, and marks the slots busy', () => {
    expect(decideSubmitError(apiError(429, 'concurrency_limited', 2), 0, half, 10_000)).toEqual({
      kind: 'resend',
      delayMs: 2000,
      reason: '429 concurrency_limited',
      slotsBusy: true,
    });
    expect(decideSubmitError(apiError(429, 'concurrency_limited'), 0, half, 700)).toMatchObject({
      delayMs: 700,
    });
  });

  it('resends after a 500 or a connection failure with jittered backoff', () => {
    expect(decideSubmitError(apiError(500, 'internal_error'), 3, half, 1)).toMatchObject({
      kind: 'resend',
      delayMs: 1000,
      slotsBusy: false,
    });
    expect(decideSubmitError(new ApiConnectionError('reset'), 0, half, 1)).toMatchObject({
      kind: 'resend',
      delayMs: 125,
    });
    expect(decideSubmitError(apiError(502, null), 0, half, 1)).toMatchObject({ kind: 'resend' });
  });

  it('fails the item on a 400 with the service code and never resends it', () => {
    expect(decideSubmitError(apiError(400, 'max_cost_exceeded'), 0, half, 1)).toMatchObject({
      kind: 'item_failed',
      code: 'max_cost_exceeded',
    });
    expect(decideSubmitError(apiError(400, 'invalid_parameter'), 0, half, 1)).toMatchObject({
      kind: 'item_failed',
      code: 'invalid_parameter',
    });
  });

  it('stops the whole batch on 401 and 402', () => {
    expect(decideSubmitError(apiError(401, 'invalid_api_key'), 0, half, 1)).toMatchObject({
      kind: 'account_refused',
      code: 'invalid_api_key',
    });
    expect(decideSubmitError(apiError(402, 'insufficient_balance'), 0, half, 1)).toMatchObject({
      kind: 'account_refused',
    });
  });

  it('fails loudly on 409 and says a new key will not be used blindly', () => {
    const decision = decideSubmitError(apiError(409, 'idempotency_key_reused'), 0, half, 1);
    expect(decision).toMatchObject({ kind: 'item_failed', code: 'idempotency_key_reused' });
    expect(decision.kind === 'item_failed' && decision.message).toMatch(
      /will not submit this item under a new key/,
    );
  });

  it('rethrows what is not an API outcome (a bug must not look like a network error)', () => {
    expect(() => decideSubmitError(new TypeError('boom'), 0, half, 1)).toThrow(TypeError);
  });
});

describe('backoffDelay', () => {
  it('is full jitter under a doubling ceiling with a cap', () => {
    expect(backoffDelay(0, () => 0.999)).toBe(249);
    expect(backoffDelay(2, () => 0.5)).toBe(500);
    expect(backoffDelay(50, () => 0.999)).toBe(29_970);
    expect(backoffDelay(5, () => 0)).toBe(0);
  });
});

describe('decideJobFailure', () => {
  it('resubmits model_busy after 30 s whatever the poll interval, other retryable codes at once', () => {
    expect(decideJobFailure('model_busy', 0, 2)).toEqual({ kind: 'resubmit', delayMs: 30_000 });
    expect(MODEL_BUSY_DELAY_MS).toBe(30_000);
    // Only a test harness passes a shorter wait (MEDIABATCH_MODEL_BUSY_SECONDS).
    expect(decideJobFailure('model_busy', 0, 2, 500)).toEqual({ kind: 'resubmit', delayMs: 500 });
    for (const code of ['provider_unavailable', 'processing_failed', 'timeout']) {
      expect(decideJobFailure(code, 1, 2)).toEqual({ kind: 'resubmit', delayMs: 0 });
    }
  });

  it('fails content_rejected, canceled and unknown codes without a retry', () => {
    for (const code of ['content_rejected', 'canceled', 'something_new']) {
      expect(decideJobFailure(code, 0, 5, 10)).toEqual({ kind: 'item_failed', code });
    }
  });

  it('gives up with retries_exhausted once the retries are used', () => {
    expect(decideJobFailure('processing_failed', 2, 2, 10)).toEqual({
      kind: 'item_failed',
      code: 'retries_exhausted',
    });
    expect(decideJobFailure('model_busy', 0, 0, 10)).toEqual({
      kind: 'item_failed',
      code: 'retries_exhausted',
    });
  });

  it('lets a later run retry only transient failures', () => {
    expect(isRetryableOnRerun('retries_exhausted')).toBe(true);
    expect(isRetryableOnRerun('content_rejected')).toBe(false);
    expect(isRetryableOnRerun('invalid_parameter')).toBe(false);
  });
});
