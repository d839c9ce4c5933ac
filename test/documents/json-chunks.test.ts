import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonChunks, jsonStream, Later } from '../../src/documents/json-chunks.js';

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

  it('writes a member that is an iterable (a spool read back) as JSON.stringify writes its elements collected (property)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
        fc.array(fc.jsonValue(), { maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        (doc, items, perChunk) => {
          const spool = {
            *[Symbol.iterator]() {
              yield* items;
            },
          };
          expect(text({ ...doc, items: spool, after: 1 }, perChunk)).toBe(
            `${JSON.stringify({ ...doc, items, after: 1 }, null, 2)}\n`,
          );
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

describe('jsonStream', () => {
  async function* each(values: readonly unknown[]) {
    for (const value of values) {
      await Promise.resolve();
      yield value;
    }
  }
  const streamedText = async (doc: object, perChunk?: number) => {
    let out = '';
    for await (const chunk of jsonStream(doc, perChunk)) out += chunk;
    return out;
  };

  it('writes what JSON.stringify writes of the document collected, iterables and Later members resolved (property)', async () => {
    // Each member stays as it is, becomes an iterable (an array's elements, as they arrive) or a
    // Later (totals known after the items): the text must not tell them apart.
    const member = fc.oneof(
      fc.jsonValue().map((value) => ({ value, as: 'plain' as const })),
      fc.array(fc.jsonValue(), { maxLength: 9 }).map((value) => ({ value, as: 'iterable' as const })),
      fc.jsonValue().map((value) => ({ value, as: 'later' as const })),
      fc.constant({ value: undefined, as: 'later' as const }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string(), member),
        fc.integer({ min: 1, max: 4 }),
        async (members, perChunk) => {
          const whole: Record<string, unknown> = {};
          const streamed: Record<string, unknown> = {};
          for (const [key, { value, as }] of Object.entries(members)) {
            whole[key] = value;
            streamed[key] =
              as === 'iterable'
                ? each(value as unknown[])
                : as === 'later'
                  ? new Later(async () => value)
                  : value;
          }
          expect(await streamedText(streamed, perChunk)).toBe(`${JSON.stringify(whole, null, 2)}\n`);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('writes an iterable a slice at a time, never the whole array in one chunk', async () => {
    const items = Array.from({ length: 2_500 }, (_, i) => ({ id: `item-${i}`, files: [`f${i}`] }));
    const totals = new Later(() => ({ items: 2_500 }));
    const chunks: string[] = [];
    for await (const chunk of jsonStream({ manifest: 'm', items: each(items), totals }, 500))
      chunks.push(chunk);
    expect(chunks.join('')).toBe(
      `${JSON.stringify({ manifest: 'm', items, totals: { items: 2_500 } }, null, 2)}\n`,
    );
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(chunks.join('').length / 4);
  });
});
