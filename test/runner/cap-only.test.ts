import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AttemptRecord, ItemRecord, ItemState } from '../../src/ledger/records.js';
import type { ManifestItem } from '../../src/manifest/index.js';
import { currentRequest } from '../../src/runner/item-plan.js';
import { buildRequestBody, requestHash, sameApartFromCap } from '../../src/runner/request.js';

/** Lowering max_cost_usd on a done item is no new request: the rule and the ledger's view of it. */

const item = (over: Partial<ManifestItem> = {}): ManifestItem => ({
  id: 'beach',
  model: 'acme-video-2',
  input: { prompt: 'a beach', seconds: 4 },
  metadata: { campaign: 'spring' },
  maxCostMicros: 500_000,
  ...over,
});

const body = (of: ManifestItem, seq = 1, cap: number | null = of.maxCostMicros, name = 'spring') =>
  buildRequestBody(name, of, seq, cap);

describe('sameApartFromCap (a recorded body against the item as it is now)', () => {
  it('is true when only the cap, the attempt number or mediabatch.* metadata differ', () => {
    expect(sameApartFromCap(body(item()), item({ maxCostMicros: 200_000 }))).toBe(true);
    expect(sameApartFromCap(body(item()), item({ maxCostMicros: null }))).toBe(true);
    expect(sameApartFromCap(body(item({ maxCostMicros: null }), 1, 130_000), item())).toBe(true);
    expect(sameApartFromCap(body(item(), 3, 500_000, 'renamed'), item())).toBe(true);
  });

  it('is false when anything generated differs', () => {
    const before = body(item());
    for (const after of [
      item({ input: { prompt: 'a beach at dusk', seconds: 4 } }),
      item({ input: { prompt: 'a beach', seconds: 5 } }),
      item({ input: { prompt: 'a beach', seconds: '4' } }),
      item({ input: { prompt: 'a beach' } }),
      item({ input: { prompt: 'a beach', seconds: 4, style: null } }),
      item({ model: 'acme-video-3' }),
      item({ model: null }),
      item({ metadata: { campaign: 'autumn' } }),
      item({ metadata: {} }),
    ])
      expect(sameApartFromCap(before, { ...after, maxCostMicros: 200_000 })).toBe(false);
  });

  it('ignores key order, and reads an absent model and a null one alike (an imported body)', () => {
    const reordered = JSON.stringify({
      metadata: { 'mediabatch.item': 'beach', campaign: 'spring' },
      input: { seconds: 4, prompt: 'a beach' },
      max_cost_usd: '9.000000',
      model: 'acme-video-2',
    });
    expect(sameApartFromCap(reordered, item())).toBe(true);
    const imported = JSON.stringify({ model: null, input: { prompt: 'p' }, metadata: null });
    expect(sameApartFromCap(imported, item({ model: null, input: { prompt: 'p' }, metadata: {} }))).toBe(
      true,
    );
  });

  it('differs with the kind of a nested value: a number, text, null, a list and an object are not alike', () => {
    const recordedWith = (value: unknown) => body(item({ input: { prompt: 'p', shot: value } }));
    const nowWith = (value: unknown) => item({ input: { prompt: 'p', shot: value } });
    const pairs: [unknown, unknown][] = [
      [4, {}],
      ['', {}],
      [null, {}],
      [[], {}],
      [[1], { '0': 1 }],
      [[1], { '0': 1, length: 1 }],
      [[], { length: 0 }],
      [[], ''],
    ];
    for (const [one, other] of pairs) {
      expect(sameApartFromCap(recordedWith(one), nowWith(other))).toBe(false);
      expect(sameApartFromCap(recordedWith(other), nowWith(one))).toBe(false);
    }
  });

  it('differs when a list gains or loses an entry at its end, or its entries change order', () => {
    const recordedWith = (value: unknown) => body(item({ input: { prompt: 'p', shots: value } }));
    const nowWith = (value: unknown) => item({ input: { prompt: 'p', shots: value } });
    for (const [one, other] of [
      [['wide'], ['wide', 'close']],
      [[], ['wide']],
      [[{ at: 1 }], [{ at: 1 }, { at: 2 }]],
      [
        ['wide', 'close'],
        ['close', 'wide'],
      ],
    ]) {
      expect(sameApartFromCap(recordedWith(one), nowWith(other))).toBe(false);
      expect(sameApartFromCap(recordedWith(other), nowWith(one))).toBe(false);
    }
    const nested = [{ at: 1, lens: { mm: 35, kind: 'prime' } }, [2, [3]]];
    expect(sameApartFromCap(recordedWith(nested), nowWith(structuredClone(nested)))).toBe(true);
  });

  it('differs in a nested field, and not in nested key order, of the input and of the metadata', () => {
    const recorded = body(
      item({
        input: { prompt: 'p', camera: { lens: { mm: 35 }, moves: ['pan'] } },
        metadata: { by: { team: 'a' } },
      }),
    );
    const now = (mm: number, team: string) =>
      item({
        maxCostMicros: 2_000_000,
        input: { camera: { moves: ['pan'], lens: { mm } }, prompt: 'p' },
        metadata: { by: { team } },
      });
    expect(sameApartFromCap(recorded, now(35, 'a'))).toBe(true);
    expect(sameApartFromCap(recorded, now(50, 'a'))).toBe(false);
    expect(sameApartFromCap(recorded, now(35, 'b'))).toBe(false);
  });

  it('only the top-level max_cost_usd is a cap: an input field of that name is content', () => {
    const a = body(item({ input: { prompt: 'p', max_cost_usd: '1' } }));
    expect(sameApartFromCap(a, item({ input: { prompt: 'p', max_cost_usd: '2' } }))).toBe(false);
  });

  it('never matches a body that is not a JSON object, nor one with fields the item does not send', () => {
    for (const bad of ['', 'not json', '[]', 'null', '"text"'])
      expect(sameApartFromCap(bad, item())).toBe(false);
    const extra = JSON.stringify({ ...JSON.parse(body(item())), seed: 1 });
    expect(sameApartFromCap(extra, item())).toBe(false);
  });

  // Small domains, so that equal and different requests both come up often.
  const items = fc.record({
    id: fc.constant('x'),
    model: fc.constantFrom(null, 'm1', 'm2'),
    input: fc.dictionary(fc.constantFrom('prompt', 'seconds', '9', '10'), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 3,
    }),
    metadata: fc.dictionary(fc.constantFrom('campaign', 'take'), fc.constantFrom('a', 'b'), { maxKeys: 2 }),
    maxCostMicros: fc.option(fc.integer({ min: 1, max: 5_000_000 })),
  });
  const caps = fc.option(fc.integer({ min: 1, max: 5_000_000 }));
  const seqs = fc.integer({ min: 1, max: 9 });
  const uncapped = (of: ManifestItem) => requestHash({ ...of, maxCostMicros: null });

  it('property: same exactly when the requests hash alike once their caps are set equal', () => {
    fc.assert(
      fc.property(items, items, caps, seqs, (a, b, sentCap, seq) => {
        expect(sameApartFromCap(body(a, seq, sentCap), b)).toBe(uncapped(a) === uncapped(b));
      }),
      { numRuns: 500 },
    );
  });

  it('property: a body sent with any cap, at any attempt, is the same request as its item with any other', () => {
    fc.assert(
      fc.property(items, caps, caps, seqs, (a, sentCap, nowCap, seq) => {
        expect(sameApartFromCap(body(a, seq, sentCap), { ...a, maxCostMicros: nowCap })).toBe(true);
      }),
    );
  });

  it('property: the key order of the recorded body does not matter', () => {
    fc.assert(
      fc.property(items, caps, (a, cap) => {
        const reversed = (value: unknown): unknown =>
          Array.isArray(value)
            ? value.map(reversed)
            : value !== null && typeof value === 'object'
              ? Object.fromEntries(
                  Object.entries(value)
                    .reverse()
                    .map(([k, v]) => [k, reversed(v)]),
                )
              : value;
        const text = JSON.stringify(reversed(JSON.parse(body(a, 1, cap))));
        expect(sameApartFromCap(text, a)).toBe(true);
      }),
    );
  });
});

const record = (state: ItemState, requestHash: string): ItemRecord => ({
  itemId: 'beach',
  requestHash,
  state,
  retriesUsed: 0,
  errorCode: null,
  errorMessage: null,
  updatedAt: '',
});

const attempt = (over: Partial<AttemptRecord>): AttemptRecord => ({
  id: 7,
  itemId: 'beach',
  seq: 2,
  idempotencyKey: 'k',
  requestBody: '',
  requestHash: '',
  reservedMicros: 0,
  state: 'accepted',
  httpStatus: 202,
  httpCode: null,
  jobId: 'job_1',
  jobStatus: 'succeeded',
  amountMicros: 0,
  refundedMicros: 0,
  errorCode: null,
  errorMessage: null,
  expiresAt: null,
  filesSaved: true,
  createdAt: '',
  answeredAt: null,
  completedAt: null,
  ...over,
});

describe('currentRequest', () => {
  const before = item();
  const old = requestHash(before);
  const sent = attempt({ requestBody: body(before, 2), requestHash: old });
  const lowered = item({ maxCostMicros: 200_000 });
  const whole = (a: AttemptRecord) => a;

  it('a done item whose cap alone changed keeps its recorded hash', () => {
    expect(currentRequest(lowered, record('done', old), sent, whole)).toEqual({ hash: old, capOnly: true });
  });

  it('so does one in flight: a job running, answered, or a POST not answered yet', () => {
    for (const latest of [
      { ...sent, jobStatus: 'running', filesSaved: false },
      { ...sent, jobStatus: 'succeeded', filesSaved: false },
      { ...sent, state: 'prepared' as const, jobId: null, jobStatus: null, filesSaved: false },
    ])
      expect(currentRequest(lowered, record('in_flight', old), latest, whole)).toEqual({
        hash: old,
        capOnly: true,
      });
  });

  it('a prompt changed with the cap is a new request', () => {
    const edited = item({ maxCostMicros: 200_000, input: { prompt: 'a beach at dusk', seconds: 4 } });
    expect(currentRequest(edited, record('done', old), sent, whole)).toEqual({
      hash: requestHash(edited),
      capOnly: false,
    });
  });

  it('items no job answers go out with the new cap, as any edit does', () => {
    for (const state of ['pending', 'failed', 'budget_exceeded', 'expired'] as const)
      expect(currentRequest(lowered, record(state, old), sent, whole).capOnly).toBe(false);
    const lost = { ...sent, jobStatus: 'lost' };
    expect(currentRequest(lowered, record('in_flight', old), lost, whole).capOnly).toBe(false);
    const rejected = { ...sent, state: 'rejected' as const };
    expect(currentRequest(lowered, record('in_flight', old), rejected, whole).capOnly).toBe(false);
  });

  it('an attempt sent for an earlier version of the item does not answer the recorded one', () => {
    const stale = { ...sent, requestHash: 'an-older-hash' };
    expect(currentRequest(lowered, record('in_flight', old), stale, whole).capOnly).toBe(false);
  });

  it('reads the recorded body only when the hash differs (plan reads it from SQLite)', () => {
    const never = () => {
      throw new Error('read a body for an unchanged item');
    };
    expect(currentRequest(before, record('done', old), attempt({}), never)).toEqual({
      hash: old,
      capOnly: false,
    });
    const blank = attempt({});
    expect(currentRequest(lowered, record('done', old), blank, () => sent)).toEqual({
      hash: old,
      capOnly: true,
    });
  });

  it('a budget-derived cap in the body is a cap like any other', () => {
    const uncapped = item({ maxCostMicros: null });
    const derived = attempt({
      requestBody: body(uncapped, 1, 1_300_000),
      requestHash: requestHash(uncapped),
    });
    const rec = record('done', requestHash(uncapped));
    expect(currentRequest(item(), rec, derived, whole)).toEqual({
      hash: requestHash(uncapped),
      capOnly: true,
    });
  });
});
