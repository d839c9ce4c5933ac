import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '../../src/ledger/records.js';
import type { ManifestItem } from '../../src/manifest/index.js';
import {
  isRejectedAttempt,
  nextPrompt,
  promptsOf,
  promptWords,
  type Rejection,
  Rejections,
  rejectionsOf,
  withPrompt,
} from '../../src/runner/fallback.js';
import { planItem } from '../../src/runner/item-plan.js';
import { sameApartFromCap } from '../../src/runner/request.js';
import { requestKey } from '../../src/runner/request-key.js';

/** The rules of fallbacks past moderation (docs/manifest.md, "Fallback prompts"), pure. */

const item = (over: Partial<ManifestItem> = {}): ManifestItem => ({
  id: 'a',
  model: 'm',
  input: { prompt: 'p0', seconds: 2 },
  metadata: {},
  maxCostMicros: null,
  fallbackPrompts: ['p1', 'p2'],
  ...over,
});

const keyOf = (prompt: string, of = item()) => requestKey(withPrompt(of, prompt));

const rejection = (key: string, over: Partial<Rejection> = {}): Rejection => ({
  key,
  itemId: 'x',
  prompt: '',
  message: 'no',
  jobId: 'job_1',
  at: null,
  ...over,
});

const attempt = (over: Partial<AttemptRecord> = {}): AttemptRecord => ({
  id: 1,
  itemId: 'a',
  seq: 1,
  idempotencyKey: 'k',
  requestBody: JSON.stringify({ model: 'm', input: { prompt: 'p0', seconds: 2 } }),
  requestHash: 'h',
  reservedMicros: 0,
  state: 'accepted',
  httpStatus: 202,
  httpCode: null,
  jobId: 'job_1',
  jobStatus: 'failed',
  amountMicros: 1,
  refundedMicros: 1,
  errorCode: 'content_rejected',
  errorMessage: 'rejected by moderation',
  expiresAt: null,
  filesSaved: false,
  createdAt: '',
  answeredAt: 'answered',
  completedAt: 'completed',
  ...over,
});

describe('fallback prompts', () => {
  it("lists the item's own prompt first, then its fallbacks; an item without them has one", () => {
    expect(promptsOf(item())).toEqual(['p0', 'p1', 'p2']);
    expect(promptsOf(item({ fallbackPrompts: undefined }))).toEqual(['p0']);
  });

  it('asks with another prompt in every other field the same, and is itself with its own', () => {
    const own = item();
    expect(withPrompt(own, 'p0')).toBe(own);
    expect(withPrompt(own, 'p2')).toEqual({ ...own, input: { prompt: 'p2', seconds: 2 } });
    expect(own.input.prompt).toBe('p0');
  });

  it('sends the first prompt whose request is not rejected, and none when all are', () => {
    const rejected = new Set([keyOf('p0'), keyOf('p1')]);
    expect(nextPrompt(item(), (key) => rejected.has(key))).toMatchObject({
      number: 3,
      of: 3,
      item: { input: { prompt: 'p2' } },
    });
    expect(nextPrompt(item(), () => false)).toMatchObject({ number: 1, of: 3, item: item() });
    expect(nextPrompt(item(), () => true)).toBeNull();
    // A rejection is of a request: the same prompt in another variant is another request.
    const other = item({ variant: { of: 'a', number: 2, count: 2 } });
    expect(nextPrompt(other, (key) => rejected.has(key))?.number).toBe(1);
  });

  it('holds an item to the rejections of this run and, unless it is asked again, to earlier ones', () => {
    const rejections = new Rejections([rejection(keyOf('p0'))], new Set(['asked']));
    expect(rejections.empty).toBe(false);
    expect(rejections.next(item())?.number).toBe(2);
    expect(rejections.next(item({ id: 'asked' }))?.number).toBe(1);
    rejections.add(rejection(keyOf('p0', item({ id: 'asked' })), { message: 'again' }));
    expect(rejections.next(item({ id: 'asked' }))?.number).toBe(2);
    expect(rejections.of('asked', keyOf('p0'))?.message).toBe('again');
    rejections.add(rejection(keyOf('p1')));
    rejections.add(rejection(keyOf('p2'), { message: 'last' }));
    expect(rejections.next(item())).toBeNull();
    expect(rejections.asSent(item())).toEqual(item());
    expect(rejections.lastOf(item())?.message).toBe('last');
    expect(rejections.of('a', 'unknown')).toBeUndefined();
  });

  it('asks no key of an item while nothing is rejected', () => {
    const none = new Rejections([]);
    expect(none.empty).toBe(true);
    expect(none.next(item())).toEqual({ number: 1, of: 3, item: item() });
    none.add(rejection(keyOf('p0')));
    expect(none.empty).toBe(false);
    expect(none.asSent(item()).input.prompt).toBe('p1');
  });

  it("makes a ledger's rejected attempts rejections by their request key, skipping a body that is none", () => {
    expect(rejectionsOf([attempt(), attempt({ id: 2, requestBody: 'not json' })], () => 1)).toEqual([
      {
        key: keyOf('p0', item({ fallbackPrompts: undefined })),
        itemId: 'a',
        prompt: 'p0',
        message: 'rejected by moderation',
        jobId: 'job_1',
        at: 'completed',
      },
    ]);
    const unanswered = attempt({
      completedAt: null,
      requestBody: JSON.stringify({ model: 'm', input: { seconds: 2 } }),
    });
    expect(rejectionsOf([unanswered], () => 1)[0]).toMatchObject({ prompt: '', at: 'answered' });
  });

  it('tells a job moderation rejected from every other ending', () => {
    expect(isRejectedAttempt(attempt())).toBe(true);
    expect(isRejectedAttempt(attempt({ errorCode: 'model_busy' }))).toBe(false);
    expect(isRejectedAttempt(attempt({ jobStatus: 'canceled' }))).toBe(false);
    expect(isRejectedAttempt(attempt({ state: 'rejected' }))).toBe(false);
  });

  it('words the prompt an item sends', () => {
    expect(promptWords({ number: 1, of: 3 })).toBe('its prompt');
    expect(promptWords({ number: 3, of: 3 })).toBe('fallback prompt 2 of 2');
  });

  it('sends a failed content_rejected item again only while a prompt is left', () => {
    const failed = {
      itemId: 'a',
      requestHash: 'h',
      state: 'failed' as const,
      retriesUsed: 0,
      errorCode: 'content_rejected',
      errorMessage: null,
      updatedAt: '',
    };
    const opts = { regenerateExpired: false };
    expect(planItem('h', failed, attempt(), { ...opts, promptLeft: () => true })).toEqual({
      label: 'retry',
      action: 'submit',
      reason: 'fallback',
    });
    expect(planItem('h', failed, attempt(), { ...opts, promptLeft: () => false })).toMatchObject({
      label: 'failed',
    });
    expect(
      planItem('h', { ...failed, errorCode: 'processing_failed_x' }, attempt(), {
        ...opts,
        promptLeft: () => true,
      }),
    ).toMatchObject({ label: 'failed' });
  });

  it("takes a body sent with one of the item's fallbacks for the item's request, whatever its cap", () => {
    const sent = (prompt: string) =>
      JSON.stringify({ model: 'm', input: { prompt, seconds: 2 }, max_cost_usd: '1.00' });
    expect(sameApartFromCap(sent('p2'), item())).toBe(true);
    expect(sameApartFromCap(sent('p0'), item())).toBe(true);
    expect(sameApartFromCap(sent('elsewhere'), item())).toBe(false);
    expect(sameApartFromCap(sent('p2'), item({ fallbackPrompts: undefined }))).toBe(false);
  });
});

describe('a failed item has a fallback left', () => {
  it('only past its own prompt: a fallback not rejected, never its own prompt again', () => {
    const own = keyOf('p0');
    expect(new Rejections([rejection(own)]).fallbackLeft(item())).toBe(true);
    expect(new Rejections([rejection(own), rejection(keyOf('p1'))]).fallbackLeft(item())).toBe(true);
    const all = [rejection(own), rejection(keyOf('p1')), rejection(keyOf('p2'))];
    expect(new Rejections(all).fallbackLeft(item())).toBe(false);
    // Its own prompt's rejection not known by key (a job an import adopted): nothing is sent.
    expect(new Rejections([]).fallbackLeft(item())).toBe(false);
    expect(new Rejections([rejection('another request')]).fallbackLeft(item())).toBe(false);
    // No fallbacks: the item failed on its only prompt.
    expect(new Rejections([rejection(own)]).fallbackLeft(item({ fallbackPrompts: undefined }))).toBe(false);
  });
});
