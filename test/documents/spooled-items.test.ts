import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpooledItems } from '../../src/documents/spooled-items.js';

/** The temporary folders spools made, by name. */
const spoolFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith('mediabatch-items-'));

describe('SpooledItems', () => {
  it('gives back every item as it was added, each time it is read, held or in its file (property)', () => {
    // Plain JSON objects, as documents' items are; lines with line breaks and non-ASCII text
    // cross the file's blocks.
    const item = fc.record({
      id: fc.string(),
      n: fc.integer(),
      text: fc.string({ unit: 'grapheme' }),
      v: fc.jsonValue(),
    });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 40 }), fc.integer({ min: 0, max: 8 }), (items, held) => {
        const spool = new SpooledItems<(typeof items)[number]>(held);
        for (const each of items) spool.add(each);
        try {
          // As written into a document: JSON of the items (held ones are given back as they are).
          const expected = JSON.stringify(items);
          expect(JSON.stringify([...spool])).toBe(expected);
          expect(JSON.stringify([...spool])).toBe(expected);
          expect(spool.length).toBe(items.length);
        } finally {
          spool.close();
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reads a large spool back a block at a time, and leaves no file once closed', () => {
    const before = spoolFolders().length;
    const spool = new SpooledItems<{ id: string; words: string }>(10);
    const words = 'é'.repeat(300);
    for (let n = 0; n < 3_000; n += 1) spool.add({ id: `item-${n}`, words });
    expect(spoolFolders().length).toBe(before + 1);
    let count = 0;
    for (const each of spool) {
      expect(each).toEqual({ id: `item-${count}`, words });
      count += 1;
    }
    expect(count).toBe(3_000);
    spool.close();
    expect(spoolFolders().length).toBe(before);
  });
});
