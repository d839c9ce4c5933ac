import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findDuplicateKey, offsetOfPath } from '../../src/manifest/json-locate.js';
import { decodeUtf8, invalidUtf8Offset } from '../../src/manifest/load.js';
import { formatPath } from '../../src/manifest/problems.js';
import { ITEM_KEYS } from '../../src/manifest/schema.js';
import { closestMatch } from '../../src/suggest.js';

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
    expect(closestMatch('promt', ITEM_KEYS)).toBe('prompt');
    expect(closestMatch('Prompt', ITEM_KEYS)).toBe('prompt');
    expect(closestMatch('max_cost', ['max_cost_usd', 'model'])).toBe('max_cost_usd');
    expect(closestMatch('colour', ITEM_KEYS)).toBeNull();
  });
});
