import { describe, expect, it } from 'vitest';
import { ApiConnectionError, ApiError } from '../../src/errors.js';
import {
  backoffDelay,
  DOWNLOAD_BACKOFF,
  decideDownloadRetry,
  decideJobFailure,
  decideSubmitError,
  isRetryableOnRerun,
  SUBMIT_BACKOFF,
} from '../../src/runner/policy.js';
import { accountRefusal } from '../../src/runner/stop-rules.js';

const apiError = (status: number, code: string | null = 'some_code', retryAfter: number | null = null) =>
  new ApiError({
    status,
    type: null,
    serviceCode: code,
    param: null,
    requestId: 'req_1',
    retryAfter,
    message: `m${status}`,
  });
const half = () => 0.5;

describe('the retry rules as exact values', () => {
  it('backs off with full jitter from 250 ms doubling to 30 s for POSTs, 500 ms to 10 s for downloads', () => {
    expect(SUBMIT_BACKOFF).toEqual({ baseMs: 250, capMs: 30_000 });
    expect(DOWNLOAD_BACKOFF).toEqual({ baseMs: 500, capMs: 10_000 });
    expect([0, 1, 2, 7, 8, 40].map((n) => backoffDelay(n, half))).toEqual([
      125, 250, 500, 15_000, 15_000, 15_000,
    ]);
    expect(backoffDelay(3, () => 0.999_999)).toBe(1_999);
  });

  it('answers each POST failure with its rule', () => {
    expect(decideSubmitError(apiError(429, 'concurrency_limited', 2), 0, half, 7)).toEqual({
      kind: 'resend',
      delayMs: 2_000,
      reason: '429 concurrency_limited',
      slotsBusy: true,
    });
    expect(decideSubmitError(apiError(429, null), 0, half, 7)).toEqual({
      kind: 'resend',
      delayMs: 7,
      reason: '429 http_429',
      slotsBusy: true,
    });
    for (const status of [408, 500, 503])
      expect(decideSubmitError(apiError(status), 2, half, 7)).toEqual({
        kind: 'resend',
        delayMs: 500,
        reason: `${status} some_code`,
        slotsBusy: false,
      });
    expect(decideSubmitError(new ApiConnectionError('socket hang up'), 1, half, 7)).toEqual({
      kind: 'resend',
      delayMs: 250,
      reason: 'socket hang up',
      slotsBusy: false,
    });
    for (const status of [401, 402])
      expect(decideSubmitError(apiError(status), 0, half, 7)).toEqual({
        kind: 'account_refused',
        code: 'some_code',
        message: `m${status}`,
      });
    expect(decideSubmitError(apiError(400, null), 0, half, 7)).toEqual({
      kind: 'item_failed',
      code: 'http_400',
      message: 'm400',
      signature: 'http_400',
    });
    const conflict = decideSubmitError(apiError(409, 'idempotency_key_reused'), 0, half, 7);
    expect(conflict).toMatchObject({ kind: 'item_failed', code: 'idempotency_key_reused' });
    expect((conflict as { message: string }).message).toContain('will not submit this item under a new key');
    expect(() => decideSubmitError(new TypeError('bug'), 0, half, 7)).toThrow('bug');
  });

  it('stops the run on 401 and 402 only', () => {
    expect(accountRefusal(apiError(401, 'invalid_api_key'))).toEqual({
      kind: 'account_refused',
      code: 'invalid_api_key',
      message: 'm401',
    });
    expect(accountRefusal(apiError(402, null))).toEqual({
      kind: 'account_refused',
      code: 'http_402',
      message: 'm402',
    });
    for (const other of [
      apiError(400),
      apiError(403),
      apiError(500),
      new ApiConnectionError('x'),
      new Error('x'),
    ])
      expect(accountRefusal(other)).toBeNull();
  });

  it('resubmits retryable job failures, model_busy 30 s later, until retries run out', () => {
    expect(decideJobFailure('model_busy', 0, 2)).toEqual({ kind: 'resubmit', delayMs: 30_000 });
    expect(decideJobFailure('model_busy', 0, 2, 1_000)).toEqual({ kind: 'resubmit', delayMs: 1_000 });
    for (const code of ['provider_unavailable', 'processing_failed', 'timeout'])
      expect(decideJobFailure(code, 1, 2, 1_000)).toEqual({ kind: 'resubmit', delayMs: 0 });
    expect(decideJobFailure('timeout', 2, 2, 1_000)).toEqual({
      kind: 'item_failed',
      code: 'retries_exhausted',
    });
    for (const code of ['content_rejected', 'canceled', 'toString', 'constructor', 'unknown_code'])
      expect(decideJobFailure(code, 0, 2, 1_000)).toEqual({ kind: 'item_failed', code });
  });

  it('lets a later run retry only transient failures', () => {
    for (const code of [
      null,
      'retries_exhausted',
      'model_busy',
      'provider_unavailable',
      'processing_failed',
      'timeout',
    ])
      expect(isRetryableOnRerun(code), String(code)).toBe(true);
    for (const code of [
      'content_rejected',
      'canceled',
      'invalid_parameter',
      'idempotency_key_reused',
      'constructor',
    ])
      expect(isRetryableOnRerun(code), code).toBe(false);
  });

  it('retries a download 4 times for our own disk and 10 for the network, with download backoff', () => {
    expect(decideDownloadRetry(3, 'local', half)).toEqual({ kind: 'retry', delayMs: 2_000 });
    expect(decideDownloadRetry(4, 'local', half)).toEqual({ kind: 'give_up' });
    expect(decideDownloadRetry(9, 'network', half)).toEqual({ kind: 'retry', delayMs: 5_000 });
    expect(decideDownloadRetry(10, 'network', half)).toEqual({ kind: 'give_up' });
  });

  it('waits out a storage endpoint that does not answer: 40 tries, 1 s doubling to 30 s', () => {
    expect(decideDownloadRetry(1, 'store_unreachable', half)).toEqual({ kind: 'retry', delayMs: 1_000 });
    expect(decideDownloadRetry(39, 'store_unreachable', half)).toEqual({ kind: 'retry', delayMs: 15_000 });
    expect(decideDownloadRetry(40, 'store_unreachable', half)).toEqual({ kind: 'give_up' });
  });
});
