import { describe, expect, it } from 'vitest';
import { estimateItem, priceKey, pricesSeen } from '../../../src/batch/ledger/cost-estimate.js';
import { attempt, item } from '../../documents/records.js';

const body = (seconds: number, definition: string, model?: string) => ({
  ...(model ? { model } : {}),
  input: { prompt: 'p', seconds, definition },
  metadata: { 'mediabatch.item': 'x' },
});

describe('cost estimate', () => {
  it('keys prices by model, seconds and definition only', () => {
    expect(priceKey(null, { prompt: 'a', seconds: 6, definition: '720p', orientation: '16:9' })).toBe(
      priceKey(null, { prompt: 'b', seconds: 6, definition: '720p' }),
    );
    expect(priceKey('m1', { seconds: 6 })).not.toBe(priceKey('m2', { seconds: 6 }));
    expect(priceKey(null, { seconds: 6 })).not.toBe(priceKey(null, { seconds: 8 }));
    expect(priceKey(null, undefined)).toBe(priceKey(null, {}));
  });

  it('reads prices from accepted attempts request bodies; the newest wins per kind', () => {
    const prices = pricesSeen([
      attempt({ body: body(6, '720p'), amountMicros: 300_000 }),
      attempt({ body: body(6, '720p'), amountMicros: 250_000, refundedMicros: 250_000, jobStatus: 'failed' }),
      attempt({ body: body(10, '1080p', 'acme-video-3'), amountMicros: 1_000_000 }),
      // No answer or refused: the service never priced these.
      attempt({ state: 'prepared', jobId: null, amountMicros: 0 }),
      attempt({ state: 'rejected', jobId: null, httpStatus: 400 }),
      attempt({ requestBody: 'not json', amountMicros: 9_000_000 }),
    ]);
    expect(prices.samples).toBe(3);
    expect(prices.byKey.get(priceKey(null, { seconds: 6, definition: '720p' }))).toBe(250_000);
    expect(prices.byKey.get(priceKey('acme-video-3', { seconds: 10, definition: '1080p' }))).toBe(1_000_000);
    expect(prices.meanMicros).toBe(516_667);
  });

  it('estimates from the same kind, else the item cap, else the mean, else unknown', () => {
    const prices = pricesSeen([
      attempt({ body: body(6, '720p'), amountMicros: 200_000 }),
      attempt({ body: body(8, '720p'), amountMicros: 300_000 }),
    ]);
    expect(estimateItem(item('a', { seconds: 6, definition: '720p' }), prices)).toEqual({
      micros: 200_000,
      basis: 'seen',
      key: priceKey(null, { seconds: 6, definition: '720p' }),
    });
    expect(prices.samplesByKey.get(priceKey(null, { seconds: 6, definition: '720p' }))).toBe(1);
    expect(estimateItem(item('b', { seconds: 12 }, { maxCostMicros: 900_000 }), prices)).toEqual({
      micros: 900_000,
      basis: 'max_cost',
    });
    expect(estimateItem(item('c', { seconds: 12 }), prices)).toEqual({ micros: 250_000, basis: 'mean' });
    expect(estimateItem(item('d', {}), pricesSeen([]))).toEqual({ micros: null, basis: null });
  });

  it('matches the model the body omitted (service default) only with items without a model', () => {
    const prices = pricesSeen([attempt({ body: body(6, '720p'), amountMicros: 200_000 })]);
    expect(
      estimateItem(item('a', { seconds: 6, definition: '720p' }, { model: 'acme-video-3' }), prices).basis,
    ).toBe('mean');
    expect(estimateItem(item('a', { seconds: 6, definition: '720p' }), prices).basis).toBe('seen');
  });
});
