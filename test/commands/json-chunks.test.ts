import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonChunks } from '../../src/report/json-chunks.js';

const text = (doc: Record<string, unknown>, perChunk?: number) => [...jsonChunks(doc, perChunk)].join('');

describe('jsonChunks', () => {
  it('writes exactly what JSON.stringify(doc, null, 2) and a line break would', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.array(fc.jsonValue(), { maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        (doc, items, perChunk) => {
          const withItems = { ...doc, items };
          expect(text(withItems, perChunk)).toBe(`${JSON.stringify(withItems, null, 2)}\n`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps line breaks inside strings escaped and leaves out undefined fields', () => {
    const doc = { a: 'two\nlines', skipped: undefined, items: [{ b: 'x\ny' }, null], empty: [] };
    expect(text(doc, 1)).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(text({})).toBe('{}\n');
  });

  it('serialises a long array in many chunks, none holding the whole document', () => {
    const items = Array.from({ length: 2_500 }, (_, i) => ({ id: `item-${i}`, state: 'done' }));
    const chunks = [...jsonChunks({ manifest: 'm', items }, 500)];
    const whole = chunks.join('').length;
    expect(chunks.length).toBeGreaterThan(5);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(whole / 4);
  });
});
