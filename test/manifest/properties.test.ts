import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Manifest, parseManifest } from '../../src/manifest/index.js';

/** JSON is YAML, so generated manifests are written as JSON text with a chosen key order. */
function parseJson(manifest: unknown): Manifest {
  const result = parseManifest('/p/m.yaml', JSON.stringify(manifest), (rel) => ({
    file: rel,
    error: 'none',
  }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.manifest;
}

/** The same value with every object's keys in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reversed(v)]),
    );
  }
  return value;
}

const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/).filter((k) => !['prompt', 'seconds'].includes(k));
const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null));
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
  ),
})).value;
const prompt = fc.string({ minLength: 1, maxLength: 40 }).filter((p) => p.trim() !== '');
const content = fc.record(
  {
    prompt,
    input: fc.dictionary(key, json, { maxKeys: 4 }),
    model: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
    metadata: fc.dictionary(key, json, { maxKeys: 3 }),
    max_cost_usd: fc.integer({ min: 1, max: 10_000_000 }).map((m) => (m / 1e6).toFixed(6)),
  },
  { requiredKeys: ['prompt'] },
);

describe('derived item ids', () => {
  it('are item-<12 hex>, the same for the same content whatever the key order', () => {
    fc.assert(
      fc.property(content, (item) => {
        const a = parseJson({ version: 1, name: 'p', items: [item] }).items[0]!.id;
        const b = parseJson(reversed({ items: [item], name: 'p', version: 1 })).items[0]!.id;
        expect(a).toMatch(/^item-[0-9a-f]{12}$/);
        expect(b).toBe(a);
      }),
    );
  });

  it('do not depend on manifest-wide defaults or on the item position', () => {
    fc.assert(
      fc.property(content, content, (item, other) => {
        fc.pre(JSON.stringify(item) !== JSON.stringify(other));
        const alone = parseJson({ version: 1, name: 'p', items: [item] }).items[0]!.id;
        const later = parseJson({
          version: 1,
          name: 'q',
          model: 'default-model',
          input: { definition: '720p' },
          items: [other, item],
        }).items[1]!.id;
        expect(later).toBe(alone);
      }),
    );
  });

  // Cross-checked outside Node: sha256 of the canonical JSON (sorted keys, no spaces) of
  // {input, max_cost_micros, metadata, model, prompt}, e.g. with Python's json.dumps(sort_keys=True).
  it('are stable across runs and machines (golden values)', () => {
    const m = parseJson({
      version: 1,
      name: 'golden',
      items: [
        { prompt: 'City lights at night' },
        { prompt: 'A drone shot over a beach', input: { seconds: 4 } },
      ],
    });
    expect(m.items.map((i) => i.id)).toEqual(['item-a8aa59c6dd5d', 'item-f4d46d178bb5']);
  });

  it('treat "1.2" and "1.200000" as the same cap', () => {
    const a = parseJson({ version: 1, name: 'p', items: [{ prompt: 'x', max_cost_usd: '1.2' }] });
    const b = parseJson({ version: 1, name: 'p', items: [{ prompt: 'x', max_cost_usd: '1.200000' }] });
    expect(a.items[0]!.id).toBe(b.items[0]!.id);
  });
});

const matrixValue = fc.oneof(fc.string({ maxLength: 10 }), fc.integer({ min: -5, max: 1000 }), fc.boolean());
const matrix = fc.dictionary(
  fc.constantFrom('style', 'seed', 'lens', 'camera', 'mood'),
  fc.uniqueArray(matrixValue, { minLength: 1, maxLength: 4, selector: (v) => JSON.stringify(v) }),
  { minKeys: 1, maxKeys: 3 },
);
const items = fc
  .uniqueArray(fc.record({ id: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/), prompt }), {
    minLength: 1,
    maxLength: 4,
    selector: (i) => i.id.toLowerCase(),
  })
  .filter((list) => list.every((i) => !/^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\.|$)/i.test(i.id)));

describe('matrix expansion', () => {
  it('gives items × product of list lengths items, unique ids, each combination exactly once', () => {
    fc.assert(
      fc.property(items, matrix, (list, mx) => {
        const tagged = list.map((item, n) => ({ ...item, metadata: { n } }));
        const m = parseJson({ version: 1, name: 'mx', items: tagged, matrix: mx });
        const lengths = Object.values(mx).map((values) => values.length);
        expect(m.items).toHaveLength(list.length * lengths.reduce((a, b) => a * b, 1));

        const ids = m.items.map((i) => i.id.toLowerCase());
        expect(new Set(ids).size).toBe(ids.length);
        for (const item of m.items) expect(item.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/);

        // Each item (tagged through its metadata) meets every combination exactly once.
        const product = lengths.reduce((a, b) => a * b, 1);
        list.forEach((_, n) => {
          const mine = m.items.filter((i) => i.metadata.n === n);
          const combos = new Set(mine.map((i) => JSON.stringify(Object.keys(mx).map((k) => i.input[k]))));
          expect(mine).toHaveLength(product);
          expect(combos.size).toBe(product);
        });
      }),
    );
  });

  it('derives the same ids on every run and in matrix key order', () => {
    fc.assert(
      fc.property(items, matrix, (list, mx) => {
        const first = parseJson({ version: 1, name: 'mx', items: list, matrix: mx }).items.map((i) => i.id);
        const again = parseJson({ version: 1, name: 'mx', items: list, matrix: mx }).items.map((i) => i.id);
        expect(again).toEqual(first);
      }),
    );
  });

  it('lets the matrix value override the item input for that field', () => {
    const m = parseJson({
      version: 1,
      name: 'mx',
      input: { orientation: '1:1', style: 'plain' },
      items: [{ id: 'a', prompt: 'p', input: { orientation: '4:3', seed: 1 } }],
      matrix: { orientation: ['16:9', '9:16'] },
    });
    expect(m.items.map((i) => [i.id, i.input])).toEqual([
      ['a.16-9', { orientation: '16:9', style: 'plain', seed: 1, prompt: 'p' }],
      ['a.9-16', { orientation: '9:16', style: 'plain', seed: 1, prompt: 'p' }],
    ]);
  });
});
