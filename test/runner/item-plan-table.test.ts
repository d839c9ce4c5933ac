import { describe, expect, it } from 'vitest';
import type { AttemptRecord, ItemRecord, ItemState } from '../../src/ledger/records.js';
import { type ItemPlan, latestAttempts, planItem, retriesCarried } from '../../src/runner/item-plan.js';

/** Every branch of planItem with its exact plan, so a changed label, action or reason shows. */

const record = (state: ItemState, over: Partial<ItemRecord> = {}): ItemRecord => ({
  itemId: 'a',
  requestHash: 'h',
  state,
  retriesUsed: 2,
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
  requestHash: 'h',
  reservedMicros: 0,
  state: 'accepted',
  httpStatus: 202,
  httpCode: null,
  jobId: 'job_1',
  jobStatus: 'running',
  amountMicros: 1,
  refundedMicros: 0,
  errorCode: null,
  errorMessage: null,
  expiresAt: null,
  filesSaved: false,
  createdAt: '',
  answeredAt: '',
  completedAt: '',
  ...over,
});

const accepted = attempt();
const rejected409 = attempt({ state: 'rejected', httpStatus: 409, httpCode: 'idempotency_key_reused' });
const plain = { regenerateExpired: false };

const cases: Array<[string, ItemRecord | undefined, AttemptRecord | undefined, ItemPlan]> = [
  ['no record', undefined, undefined, { label: 'new', action: 'submit' }],
  ['pending, never tried', record('pending'), undefined, { label: 'new', action: 'submit' }],
  [
    'pending, tried before',
    record('pending'),
    accepted,
    { label: 'retry', action: 'submit', reason: 'interrupted' },
  ],
  [
    'pending after forget: the service lost its paid job',
    record('pending'),
    attempt({ jobStatus: 'lost', errorCode: 'job_not_found' }),
    { label: 'retry', action: 'submit', reason: 'job_lost' },
  ],
  [
    'in flight, job accepted',
    record('in_flight'),
    accepted,
    { label: 'in_flight', action: 'resume', attempt: accepted },
  ],
  [
    'in flight, last answer a 409',
    record('in_flight'),
    rejected409,
    { label: 'failed', action: 'skip', code: 'idempotency_key_reused' },
  ],
  [
    'in flight, a 409 without a code',
    record('in_flight'),
    attempt({ state: 'rejected', httpStatus: 409, httpCode: null }),
    { label: 'failed', action: 'skip', code: 'idempotency_key_reused' },
  ],
  [
    'in flight, last answer another refusal',
    record('in_flight'),
    attempt({ state: 'rejected', httpStatus: 400, httpCode: 'invalid_parameter' }),
    { label: 'retry', action: 'submit', reason: 'interrupted' },
  ],
  [
    'in flight, a 409 not yet recorded as rejected',
    record('in_flight'),
    attempt({ state: 'accepted', httpStatus: 409 }),
    { label: 'in_flight', action: 'resume', attempt: attempt({ state: 'accepted', httpStatus: 409 }) },
  ],
  [
    'in flight, no attempt',
    record('in_flight'),
    undefined,
    { label: 'retry', action: 'submit', reason: 'interrupted' },
  ],
  ['done', record('done'), accepted, { label: 'done', action: 'verify', attempt: accepted }],
  ['done without an attempt', record('done'), undefined, { label: 'new', action: 'submit' }],
  [
    'budget exceeded',
    record('budget_exceeded'),
    undefined,
    { label: 'retry', action: 'submit', reason: 'budget_exceeded' },
  ],
  ['expired', record('expired'), accepted, { label: 'expired', action: 'skip' }],
  [
    'failed transiently',
    record('failed', { errorCode: 'model_busy' }),
    accepted,
    { label: 'retry', action: 'submit', reason: 'model_busy' },
  ],
  [
    'failed without a code',
    record('failed'),
    accepted,
    { label: 'retry', action: 'submit', reason: 'failed' },
  ],
  [
    'failed for good',
    record('failed', { errorCode: 'content_rejected' }),
    accepted,
    { label: 'failed', action: 'skip', code: 'content_rejected' },
  ],
  [
    'every take failed its checks',
    record('checks_failed', { errorCode: 'checks_failed' }),
    accepted,
    { label: 'failed', action: 'skip', code: 'checks_failed' },
  ],
  [
    'every take failed its checks, no code recorded',
    record('checks_failed'),
    accepted,
    { label: 'failed', action: 'skip', code: 'checks_failed' },
  ],
];

describe('planItem, branch by branch', () => {
  it.each(cases)('%s', (_label, rec, latest, plan) => {
    expect(planItem('h', rec, latest, plain)).toStrictEqual(plan);
  });

  it('plans a checks_failed item with a re-roll owed as a retry (plan asks; run decides it before)', () => {
    const failed = record('checks_failed', { errorCode: 'checks_failed' });
    expect(planItem('h', failed, accepted, { ...plain, rerollOwed: () => true })).toStrictEqual({
      label: 'retry',
      action: 'submit',
      reason: 'reroll',
    });
    expect(planItem('h', failed, accepted, { ...plain, rerollOwed: () => false })).toStrictEqual({
      label: 'failed',
      action: 'skip',
      code: 'checks_failed',
    });
  });

  it('plans an unanswered attempt as a resume, whatever the record says', () => {
    const prepared = attempt({ state: 'prepared' });
    expect(planItem('other', record('failed'), prepared, plain)).toStrictEqual({
      label: 'in_flight',
      action: 'resume',
      attempt: prepared,
    });
  });

  it('regenerates an expired item only with regenerateExpired', () => {
    expect(planItem('h', record('expired'), accepted, { regenerateExpired: true })).toStrictEqual({
      label: 'expired',
      action: 'submit',
    });
  });
});

describe('retriesCarried', () => {
  it('carries the count of an item a killed run left mid-way, and only that', () => {
    const interrupted: ItemPlan = { label: 'retry', action: 'submit', reason: 'interrupted' };
    expect(retriesCarried(interrupted, record('in_flight', { retriesUsed: 2 }))).toBe(2);
    expect(retriesCarried(interrupted, undefined)).toBe(0);
    expect(retriesCarried({ label: 'retry', action: 'submit', reason: 'model_busy' }, record('failed'))).toBe(
      0,
    );
    expect(retriesCarried({ label: 'changed', action: 'submit' }, record('in_flight'))).toBe(0);
    // A forgotten job starts the item afresh: the service lost it, the item did not fail.
    expect(retriesCarried({ label: 'retry', action: 'submit', reason: 'job_lost' }, record('pending'))).toBe(
      0,
    );
  });
});

describe('latestAttempts', () => {
  it('keeps the first of two attempts with the same seq, the highest seq otherwise', () => {
    const first = attempt({ id: 1, seq: 2 });
    const twin = attempt({ id: 2, seq: 2 });
    expect(latestAttempts([first, twin]).get('a')).toBe(first);
    expect(latestAttempts([attempt({ id: 3, seq: 3 }), first]).get('a')?.id).toBe(3);
    expect(latestAttempts([])).toEqual(new Map());
  });
});
