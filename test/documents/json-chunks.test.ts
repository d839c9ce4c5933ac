import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonChunks } from '../../src/documents/json-chunks.js';

const text = (doc: object, perChunk?: number) => [...jsonChunks(doc, perChunk)].join('');

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

  it('keeps line breaks inside strings escaped and leaves out what JSON.stringify leaves out', () => {
    const doc = { a: 'two\nlines', skipped: undefined, f: () => 1, items: [{ b: 'x\ny' }, null, undefined] };
    expect(text(doc, 1)).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(text({})).toBe('{}\n');
    expect(text({ only: undefined })).toBe('{}\n');
  });

  it('writes a long array in slices, none holding the whole document', () => {
    const items = Array.from({ length: 2_500 }, (_, i) => ({
      id: `item-${i}`,
      files: [`f${i}`],
      error: null,
    }));
    const doc = { manifest: 'm', items, warnings: [] };
    const chunks = [...jsonChunks(doc, 500)];
    expect(chunks.join('')).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(chunks.length).toBeGreaterThan(5);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(chunks.join('').length / 4);
  });
});
