import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Claim } from '../../src/manifest/base-ids.js';
import { ItemIds } from '../../src/manifest/item-ids.js';
import type { Source } from '../../src/manifest/problems.js';

/** A claim's source at a line of its own, as a JSON Lines item's is. */
const at = (line: number): Source => ({
  file: '/batch/items.jsonl',
  prefix: ['items_from', line - 1],
  position: () => ({ line, column: 1 }),
});

const shown = (claim: Claim | undefined) =>
  claim && { id: claim.id, declared: claim.declared, line: claim.source.position([], 'value').line };

describe('ItemIds', () => {
  it('answers as a Map of the same claims would, across many more ids than its first table holds (property)', () => {
    // Ids that repeat and differ only in case, a few thousand of them: the table grows several times.
    const id = fc
      .tuple(fc.integer({ min: 0, max: 2_500 }), fc.boolean())
      .map(([n, upper]) => `${upper ? 'Shot' : 'shot'}-${n}`);
    fc.assert(
      fc.property(fc.array(fc.tuple(id, fc.boolean()), { minLength: 1_200, maxLength: 3_000 }), (claims) => {
        const ids = new ItemIds();
        const map = new Map<string, Claim>();
        claims.forEach(([each, declared], index) => {
          const key = each.toLowerCase();
          const claim = { source: at(index + 1), id: each, declared };
          // Claimed again only where base-ids.ts would (a declared id over a derived one).
          if (map.has(key) && (map.get(key)!.declared || !declared)) return;
          ids.set(key, claim);
          map.set(key, claim);
        });
        expect(ids.size).toBe(map.size);
        for (const [each] of claims) {
          const key = each.toLowerCase();
          expect(shown(ids.get(key))).toEqual(shown(map.get(key)));
          expect(ids.has(each)).toBe(map.get(key)?.id === each);
        }
        expect(ids.get('zz')).toBeUndefined();
        expect(ids.has('zz')).toBe(false);
      }),
      { numRuns: 20 },
    );
  });
});
