import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ManifestItem } from '../../src/manifest/index.js';
import { newIdempotencyKey } from '../../src/runner/idempotency.js';
import { buildRequestBody, jobItemId, requestHash } from '../../src/runner/request.js';
import type { Job } from '../../src/service-client/index.js';

const item = (over: Partial<ManifestItem> = {}): ManifestItem => ({
  id: 'beach',
  model: 'acme-video-2',
  input: { prompt: 'a beach', seconds: 4 },
  metadata: { campaign: 'spring' },
  maxCostMicros: 1_500_000,
  ...over,
});

describe('requestHash', () => {
  it('is the SHA-256 of the canonical model, input, metadata and cap', () => {
    const expected = createHash('sha256')
      .update(
        '{"input":{"prompt":"a beach","seconds":4},"max_cost":1500000,"metadata":{"campaign":"spring"},"model":"acme-video-2"}',
      )
      .digest('hex');
    expect(requestHash(item())).toBe(expected);
  });

  it('hashes the exact text ledgers already store: keys sorted at every depth, integer-like keys in numeric order', () => {
    const nested = item({
      input: { prompt: 'p', shots: [{ z: 1, a: [2, 1] }], '10': 'ten', '9': 'nine' },
      metadata: { b: { y: null, x: true } },
    });
    const text =
      '{"input":{"9":"nine","10":"ten","prompt":"p","shots":[{"a":[2,1],"z":1}]},"max_cost":1500000,' +
      '"metadata":{"b":{"x":true,"y":null}},"model":"acme-video-2"}';
    expect(requestHash(nested)).toBe(createHash('sha256').update(text).digest('hex'));
  });

  it('ignores key order and the id, and changes with each field the user asked for', () => {
    const base = requestHash(item());
    expect(requestHash(item({ id: 'other', input: { seconds: 4, prompt: 'a beach' } }))).toBe(base);
    const changed = [
      item({ model: 'acme-video-3' }),
      item({ model: null }),
      item({ input: { prompt: 'a beach', seconds: 5 } }),
      item({ metadata: {} }),
      item({ maxCostMicros: null }),
      item({ maxCostMicros: 1_500_001 }),
    ].map(requestHash);
    expect(new Set([base, ...changed]).size).toBe(changed.length + 1);
  });
});

describe('newIdempotencyKey', () => {
  it('is mb_ and a fresh UUID each time', () => {
    const keys = [newIdempotencyKey(), newIdempotencyKey()];
    for (const key of keys)
      expect(key).toMatch(/^mb_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });
});

describe('buildRequestBody', () => {
  it('sends model, input, the cap as six decimals, and metadata tagged with manifest, item and attempt', () => {
    expect(buildRequestBody('spring', item(), 3, 1_500_000)).toBe(
      JSON.stringify({
        model: 'acme-video-2',
        input: { prompt: 'a beach', seconds: 4 },
        max_cost_usd: '1.500000',
        metadata: {
          campaign: 'spring',
          'mediabatch.manifest': 'spring',
          'mediabatch.item': 'beach',
          'mediabatch.attempt': '3',
        },
      }),
    );
  });

  it('leaves out a null model and a null cap rather than sending null', () => {
    const body = JSON.parse(buildRequestBody('s', item({ model: null, metadata: {} }), 1, null)) as Record<
      string,
      unknown
    >;
    expect(Object.keys(body)).toEqual(['input', 'metadata']);
    expect(body.metadata).toEqual({
      'mediabatch.manifest': 's',
      'mediabatch.item': 'beach',
      'mediabatch.attempt': '1',
    });
  });

  it('sends the cap it is given (a budget-derived one), not the item cap', () => {
    const body = JSON.parse(buildRequestBody('s', item(), 1, 250_000)) as { max_cost_usd: string };
    expect(body.max_cost_usd).toBe('0.250000');
  });
});

describe('jobItemId', () => {
  const jobWith = (metadata: Record<string, unknown>) => ({ metadata }) as unknown as Job;
  const sent = (
    JSON.parse(buildRequestBody('spring', item(), 2, null)) as { metadata: Record<string, string> }
  ).metadata;

  it('reads back the item buildRequestBody tagged a job with, for that manifest alone', () => {
    expect(jobItemId(jobWith(sent), 'spring')).toBe('beach');
    expect(jobItemId(jobWith(sent), 'summer')).toBeNull();
  });

  it('answers null for a job of the manifest without an item of its own', () => {
    for (const item of [undefined, '', 7, null])
      expect(jobItemId(jobWith({ ...sent, 'mediabatch.item': item }), 'spring')).toBeNull();
    expect(jobItemId(jobWith({ campaign: 'spring' }), 'spring')).toBeNull();
  });
});
