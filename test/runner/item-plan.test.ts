import { describe, expect, it } from 'vitest';
import type { AttemptRecord, ItemRecord } from '../../src/ledger/records.js';
import { earlierOutput, latestAttempts, planItem } from '../../src/runner/item-plan.js';

const record = (over: Partial<ItemRecord> = {}): ItemRecord => ({
  itemId: 'a',
  requestHash: 'h1',
  state: 'done',
  retriesUsed: 0,
  errorCode: null,
  errorMessage: null,
  updatedAt: '',
  ...over,
});

const attempt = (over: Partial<AttemptRecord> = {}): AttemptRecord => ({
  id: 1,
  itemId: 'a',
  seq: 1,
  idempotencyKey: 'k',
  requestBody: '{}',
  requestHash: 'h1',
  reservedMicros: 0,
  state: 'accepted',
  httpStatus: 202,
  httpCode: null,
  jobId: 'job_1',
  jobStatus: 'succeeded',
  amountMicros: 1,
  refundedMicros: 0,
  errorCode: null,
  errorMessage: null,
  expiresAt: null,
  filesSaved: true,
  createdAt: '',
  answeredAt: '',
  completedAt: '',
  ...over,
});

const opts = { regenerateExpired: false };

describe('planItem', () => {
  it('with --retry-failed, sends a final failure again, except a reused key', () => {
    const failed = (errorCode: string) => record({ state: 'failed', errorCode });
    const retrying = { ...opts, retryFailed: true };
    expect(planItem('h1', failed('content_rejected'), attempt(), retrying)).toEqual({
      label: 'retry',
      action: 'submit',
      reason: 'retry_failed: content_rejected',
    });
    expect(planItem('h1', failed('content_rejected'), attempt(), opts)).toEqual({
      label: 'failed',
      action: 'skip',
      code: 'content_rejected',
    });
    expect(planItem('h1', failed('idempotency_key_reused'), attempt(), retrying)).toEqual({
      label: 'failed',
      action: 'skip',
      code: 'idempotency_key_reused',
    });
  });

  it('submits new and changed items', () => {
    expect(planItem('h1', undefined, undefined, opts).label).toBe('new');
    expect(planItem('h2', record(), attempt(), opts)).toEqual({ label: 'changed', action: 'submit' });
  });

  it('resolves an unanswered attempt first, even when the item changed since', () => {
    const prepared = attempt({ state: 'prepared', jobId: null, jobStatus: null });
    expect(planItem('h2', record({ state: 'in_flight' }), prepared, opts)).toEqual({
      label: 'in_flight',
      action: 'resume',
      attempt: prepared,
    });
  });

  it('verifies done items and resumes accepted in-flight ones', () => {
    expect(planItem('h1', record(), attempt(), opts).action).toBe('verify');
    const running = attempt({ jobStatus: 'running', filesSaved: false });
    expect(planItem('h1', record({ state: 'in_flight' }), running, opts)).toMatchObject({ action: 'resume' });
  });

  it('retries transient failures and budget refusals, but not final failures', () => {
    expect(
      planItem('h1', record({ state: 'failed', errorCode: 'retries_exhausted' }), attempt(), opts).label,
    ).toBe('retry');
    expect(planItem('h1', record({ state: 'budget_exceeded' }), attempt(), opts).label).toBe('retry');
    expect(
      planItem('h1', record({ state: 'failed', errorCode: 'content_rejected' }), attempt(), opts),
    ).toEqual({
      label: 'failed',
      action: 'skip',
      code: 'content_rejected',
    });
  });

  it('regenerates expired items only when asked to', () => {
    expect(planItem('h1', record({ state: 'expired' }), attempt(), opts).action).toBe('skip');
    expect(planItem('h1', record({ state: 'expired' }), attempt(), { regenerateExpired: true }).action).toBe(
      'submit',
    );
  });

  it('finds the latest attempt of each item', () => {
    const latest = latestAttempts([
      attempt({ id: 1, seq: 1 }),
      attempt({ id: 3, seq: 3 }),
      attempt({ id: 2, seq: 2 }),
      attempt({ id: 4, itemId: 'b' }),
    ]);
    expect(latest.get('a')?.id).toBe(3);
    expect(latest.get('b')?.id).toBe(4);
  });
});

describe('earlierOutput: what an edited item still holds that was paid for', () => {
  it('keeps saved files as a take, watches a running job, fetches an unsaved success', () => {
    expect(earlierOutput('h2', attempt())).toBe('preserve');
    expect(earlierOutput('h2', attempt({ filesSaved: false, jobStatus: 'queued' }))).toBe('watch');
    expect(earlierOutput('h2', attempt({ filesSaved: false, jobStatus: 'running' }))).toBe('watch');
    expect(earlierOutput('h2', attempt({ filesSaved: false, jobStatus: 'succeeded' }))).toBe('fetch');
  });

  it('finds nothing when the item was not edited, or nothing was made', () => {
    expect(earlierOutput('h1', attempt())).toBe('nothing');
    expect(earlierOutput('h2', undefined)).toBe('nothing');
    expect(earlierOutput('h2', attempt({ filesSaved: false, jobStatus: 'failed' }))).toBe('nothing');
    expect(earlierOutput('h2', attempt({ filesSaved: false, jobStatus: 'canceled' }))).toBe('nothing');
    expect(earlierOutput('h2', attempt({ state: 'prepared', jobId: null, jobStatus: null }))).toBe('nothing');
    expect(earlierOutput('h2', attempt({ state: 'rejected', jobId: null, jobStatus: null }))).toBe('nothing');
  });
});
