import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastItem } from '../../src/manifest/fast-item.js';
import { findDuplicateKey, offsetOfPath } from '../../src/manifest/json-locate.js';
import { decodeUtf8, invalidUtf8Offset } from '../../src/manifest/load.js';
import { closestKey, formatPath } from '../../src/manifest/problems.js';
import { ITEM_KEYS, itemSchema } from '../../src/manifest/schema.js';

describe('fastItem agrees with the item schema', () => {
  const text = fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'prompt',
      'beach',
      'CON',
      '../x',
      '1.20',
      '0',
      '0.0000001',
      '-1',
      'mediabatch.x',
    ),
    fc.string({ maxLength: 8 }),
  );
  const leaf = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
  const map = fc.dictionary(
    fc.oneof(text, fc.constantFrom('prompt', '__proto__', 'Mediabatch.Item', 'seconds')),
    fc.oneof(leaf, fc.array(leaf, { maxLength: 2 })),
    { maxKeys: 3 },
  );
  const field = fc.oneof(leaf, map, fc.array(leaf, { maxLength: 2 }));
  const item = fc.dictionary(fc.oneof(fc.constantFrom(...ITEM_KEYS), text), field, { maxKeys: 6 });
  // Mostly well-shaped items near the edges (7 decimals, '0', reserved names), so that many runs
  // reach the accepting branch and the boundaries get probed.
  const mostly = <T>(good: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: field as fc.Arbitrary<unknown>, weight: 1 });
  const rarely = <T, U>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<U>) =>
    fc.oneof({ arbitrary: usual as fc.Arbitrary<T | U>, weight: 5 }, { arbitrary: odd, weight: 1 });
  const goodMap = fc.dictionary(
    fc.stringMatching(/^[a-z]{1,5}$/),
    fc.oneof(text, fc.integer(), fc.boolean()),
    {
      maxKeys: 3,
    },
  );
  const likely = fc.record(
    {
      id: mostly(
        rarely(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,10}$/), fc.constantFrom('CON', 'lpt1.x')),
      ),
      prompt: mostly(fc.string({ maxLength: 10 })),
      input: mostly(rarely(goodMap, map)),
      model: mostly(fc.string({ maxLength: 5 })),
      metadata: mostly(rarely(goodMap, map)),
      max_cost_usd: mostly(rarely(fc.stringMatching(/^[0-9]{1,3}(\.[0-9]{1,6})?$/), text)),
    },
    { requiredKeys: ['prompt'] },
  );

  it('never accepts what the schema refuses, and returns the same data', () => {
    fc.assert(
      fc.property(fc.oneof(likely, item, field), (value) => {
        const fast = fastItem(value);
        const slow = itemSchema.safeParse(value);
        if (fast !== null) {
          expect(slow.success).toBe(true);
          expect(fast).toEqual(slow.data);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts the ordinary valid item', () => {
    const value = {
      id: 'a',
      prompt: 'p',
      input: { seconds: 4 },
      model: 'm',
      metadata: { k: 1 },
      max_cost_usd: '1.5',
    };
    expect(fastItem(value)).toEqual({ ...value, max_cost_usd: 1_500_000 });
  });
});

describe('JSONL line scanner', () => {
  const line = '{"id": "a", "input": {"seconds": 0, "list": [1, {"x": 2}]}, "esc\\"aped": 1, "id": "b"}';

  it('finds where a path was written (the last duplicate, like JSON.parse)', () => {
    expect(offsetOfPath(line, [])).toBe(0);
    expect(offsetOfPath(line, ['id'])).toBe(line.lastIndexOf('"id"'));
    expect(offsetOfPath(line, ['input', 'seconds'])).toBe(line.indexOf('"seconds"'));
    expect(offsetOfPath(line, ['input', 'list', 1, 'x'])).toBe(line.indexOf('"x"'));
    expect(offsetOfPath(line, ['esc"aped'])).toBe(line.indexOf('"esc'));
    expect(offsetOfPath(line, ['input', 'missing'])).toBe(line.indexOf('{"seconds"'));
  });

  it('reports duplicate keys at any depth, and nothing for clean lines', () => {
    expect(findDuplicateKey(line, JSON.parse(line))).toEqual({
      offset: line.lastIndexOf('"id"'),
      path: ['id'],
    });
    const nested = '{"a": [{"b": 1, "b": 2}]}';
    expect(findDuplicateKey(nested, JSON.parse(nested))).toEqual({
      offset: nested.lastIndexOf('"b"'),
      path: ['a', 0, 'b'],
    });
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(findDuplicateKey(text, JSON.parse(text))).toBeNull();
      }),
    );
  });
});

describe('UTF-8 validation', () => {
  it('finds a bad byte exactly when a strict decoder refuses the bytes', () => {
    const strict = new TextDecoder('utf-8', { fatal: true });
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 12 }),
      fc.string({ unit: 'binary', maxLength: 6 }).map((s) => new TextEncoder().encode(s)),
    );
    fc.assert(
      fc.property(bytes, (buffer) => {
        let valid = true;
        try {
          strict.decode(buffer);
        } catch {
          valid = false;
        }
        expect(invalidUtf8Offset(buffer) === -1).toBe(valid);
      }),
      { numRuns: 3000 },
    );
  });

  it('gives the line and column of the first bad byte', () => {
    expect(decodeUtf8(Buffer.from('ok\nna\xefve', 'latin1'))).toEqual({
      error: 'not valid UTF-8 text',
      position: { line: 2, column: 3 },
    });
    expect(decodeUtf8(Buffer.from('\uFEFFé', 'utf8'))).toEqual({ text: 'é' });
  });
});

describe('problem helpers', () => {
  it('formats paths', () => {
    expect(formatPath(['items', 3, 'input', 'seconds'])).toBe('items[3].input.seconds');
    expect(formatPath(['metadata', 'mediabatch.item'])).toBe('metadata["mediabatch.item"]');
    expect(formatPath([])).toBe('');
  });

  it('suggests close keys only', () => {
    expect(closestKey('promt', ITEM_KEYS)).toBe('prompt');
    expect(closestKey('Prompt', ITEM_KEYS)).toBe('prompt');
    expect(closestKey('max_cost', ['max_cost_usd', 'model'])).toBe('max_cost_usd');
    expect(closestKey('colour', ITEM_KEYS)).toBeNull();
  });
});
