import { describe, expect, it } from 'vitest';
import type { ReusableTake } from '../../src/ledger/reused-take.js';
import {
  manifestVariants,
  requestKey,
  requestKeyOfBody,
  variantOfItem,
} from '../../src/runner/request-key.js';
import { TakeIndex } from '../../src/runner/take-index.js';

/** What a paid result is (docs/results.md, "A result is found by its request"), and finding one. */

const item = (prompt: string, extra: { model?: string | null; variant?: number; seconds?: number } = {}) => ({
  model: extra.model ?? null,
  input: { prompt, seconds: extra.seconds ?? 4 },
  ...(extra.variant ? { variant: { of: 'x', number: extra.variant, count: 3 } } : {}),
});

const body = (prompt: string, fields: Record<string, unknown> = {}) =>
  JSON.stringify({ input: { seconds: 4, prompt }, metadata: { 'mediabatch.item': 'z' }, ...fields });

describe('requestKey', () => {
  it('is the model, the input and the variant: not key order, metadata, cap, id or attempt', () => {
    const key = requestKey(item('a boat'));
    expect(requestKeyOfBody(body('a boat'), 1)).toBe(key);
    expect(requestKeyOfBody(body('a boat', { max_cost_usd: '0.50', metadata: { shot: '1' } }), 1)).toBe(key);
    expect(requestKeyOfBody(body('a boat', { model: null }), 1)).toBe(key);
    expect(requestKey(item('a boat', { variant: 1 }))).toBe(key);
  });

  it('differs with the prompt, any input field, the model and the variant', () => {
    const key = requestKey(item('a boat'));
    expect(requestKey(item('a car'))).not.toBe(key);
    expect(requestKey(item('a boat', { seconds: 8 }))).not.toBe(key);
    expect(requestKey(item('a boat', { model: 'acme-2' }))).not.toBe(key);
    expect(requestKeyOfBody(body('a boat', { model: 'acme-2' }), 1)).toBe(
      requestKey(item('a boat', { model: 'acme-2' })),
    );
    expect(requestKey(item('a boat', { variant: 2 }))).not.toBe(key);
    expect(requestKeyOfBody(body('a boat'), 2)).toBe(requestKey(item('a boat', { variant: 2 })));
  });

  it('has no key for a body that is not a JSON object with an input object', () => {
    expect(requestKeyOfBody('not json', 1)).toBeNull();
    expect(requestKeyOfBody('[1]', 1)).toBeNull();
    expect(requestKeyOfBody('null', 1)).toBeNull();
    expect(requestKeyOfBody(JSON.stringify({ input: 'a boat' }), 1)).toBeNull();
    expect(requestKeyOfBody(JSON.stringify({ input: ['a boat'] }), 1)).toBeNull();
    expect(requestKeyOfBody(JSON.stringify({ model: 'm' }), 1)).toBeNull();
  });

  it("reads a ledger item's variant from the manifest, else from its id", () => {
    const variants = manifestVariants([
      { id: 'hero', variant: { of: 'hero', number: 1, count: 2 } },
      { id: 'hero.v2', variant: { of: 'hero', number: 2, count: 2 } },
      { id: 'odd.v7' },
    ]);
    expect(variantOfItem(variants, 'hero.v2')).toBe(2);
    expect(variantOfItem(variants, 'odd.v7')).toBe(1);
    expect(variantOfItem(variants, 'gone.v3')).toBe(3);
    expect(variantOfItem(variants, 'gone.v12')).toBe(12);
    expect(variantOfItem(variants, 'gone')).toBe(1);
    expect(variantOfItem(variants, 'gone.v0')).toBe(1);
    expect(variantOfItem(variants, 'gone.v3x')).toBe(1);
    expect(variantOfItem(variants, 'gonev3')).toBe(1);
  });
});

const take = (
  itemId: string,
  attemptId: number,
  prompt: string,
  path = `/out/${itemId}.mp4`,
): ReusableTake => ({
  itemId,
  attemptId,
  take: 1,
  jobId: `job_${attemptId}`,
  idempotencyKey: `key_${attemptId}`,
  amountMicros: 1,
  refundedMicros: 0,
  completedAt: null,
  requestBody: body(prompt),
  expiresAt: null,
  vars: null,
  files: [{ idx: 0, path, sha256: 's', bytes: 1 }],
});

describe('TakeIndex', () => {
  const boat = requestKey(item('a boat'));

  it("finds a request's takes, the item's own first, newest first, never the current one", () => {
    const index = new TakeIndex(
      [
        take('b', 1, 'a boat'),
        take('a', 2, 'a boat'),
        take('a', 3, 'a car'),
        take('c', 4, 'a boat'),
        take('a', 5, 'a boat'),
      ],
      () => 1,
    );
    expect(index.find(boat, 'a', null).map((each) => each.attemptId)).toEqual([5, 2, 4, 1]);
    expect(index.find(boat, 'a', 5).map((each) => each.attemptId)).toEqual([2, 4, 1]);
    expect(index.find(requestKey(item('a tree')), 'a', null)).toEqual([]);
  });

  it('keys each take by its own variant, and skips a body it cannot read', () => {
    const unreadable = { ...take('x', 9, 'a boat'), requestBody: 'garbage' };
    const index = new TakeIndex([take('a', 1, 'a boat'), take('a.v2', 2, 'a boat'), unreadable], (id) =>
      id.endsWith('.v2') ? 2 : 1,
    );
    expect(index.find(boat, 'z', null).map((each) => each.attemptId)).toEqual([1]);
    expect(
      index.find(requestKey(item('a boat', { variant: 2 })), 'z', null).map((each) => each.attemptId),
    ).toEqual([2]);
    expect(index.pathOf(9, 0)).toBeNull();
  });

  it('follows a moved file, and holds a take added later, apart from the one it was given', () => {
    const given = take('a', 1, 'a boat');
    const index = new TakeIndex([given], () => 1);
    expect(index.pathOf(1, 0)).toBe('/out/a.mp4');
    index.moved(1, 0, '/out/a.take1.mp4');
    index.moved(1, 5, '/out/elsewhere.mp4');
    index.moved(7, 0, '/out/nothing.mp4');
    expect(index.pathOf(1, 0)).toBe('/out/a.take1.mp4');
    expect(index.pathOf(1, 5)).toBeNull();
    expect(given.files[0]!.path).toBe('/out/a.mp4');
    index.add(boat, take('b', 2, 'a boat', '/out/b.mp4'));
    expect(index.find(boat, 'b', null).map((each) => each.attemptId)).toEqual([2, 1]);
    expect(index.pathOf(2, 0)).toBe('/out/b.mp4');
  });
});
