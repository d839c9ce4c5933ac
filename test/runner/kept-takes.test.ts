import { describe, expect, it } from 'vitest';
import type { ManifestItem } from '../../src/manifest/index.js';
import { KeptTakes, variantNumber } from '../../src/runner/kept-takes.js';

/** The one rule of which take is kept, on items with and without variants (ManifestItem.variant). */
const item = (id: string, variant?: { of: string; number: number; count: number }) =>
  ({ id, ...(variant ? { variant } : {}) }) as ManifestItem;
const items = [
  item('solo'),
  item('duo', { of: 'duo', number: 1, count: 2 }),
  item('duo.v2', { of: 'duo', number: 2, count: 2 }),
  item('trio', { of: 'trio', number: 1, count: 3 }),
  item('trio.v2', { of: 'trio', number: 2, count: 3 }),
  item('trio.v3', { of: 'trio', number: 3, count: 3 }),
];
const keeper = (itemId: string, keptItemId: string, take: number) => ({
  itemId,
  keptItemId,
  take,
  chosenAt: 'T',
});

describe('KeptTakes', () => {
  it('counts the items with variants that have no keeper, in manifest order', () => {
    expect(new KeptTakes(items, []).withoutKeeper()).toEqual(['duo', 'trio']);
    expect(new KeptTakes(items, [keeper('trio', 'trio.v3', 1)]).withoutKeeper()).toEqual(['duo']);
  });

  it('marks the recorded keeper true, the other takes of its item false, and says nothing without one', () => {
    const rule = new KeptTakes(items, [keeper('trio', 'trio.v2', 2)]);
    expect(rule.groupOf('trio.v3')).toBe('trio');
    expect(rule.recorded({ itemId: 'trio.v2', take: 2 })).toBe(true);
    expect(rule.recorded({ itemId: 'trio.v2', take: 1 })).toBe(false);
    expect(rule.recorded({ itemId: 'trio', take: 1 })).toBe(false);
    expect(rule.recorded({ itemId: 'duo.v2', take: 1 })).toBeNull();
  });

  it('keeps the only take of an item without variants by itself, never one of several', () => {
    const rule = new KeptTakes(items, []);
    expect(rule.keptTake('solo', [{ itemId: 'solo', take: 1 }])).toEqual({ itemId: 'solo', take: 1 });
    expect(
      rule.keptTake('solo', [
        { itemId: 'solo', take: 1 },
        { itemId: 'solo', take: 2 },
      ]),
    ).toBeNull();
    expect(rule.keptTake('duo', [{ itemId: 'duo', take: 1 }])).toBeNull();
  });

  // The manifest after `variants: 3` went down to 2 for trio, and duo left it.
  const lowered = items.filter((i) => i.id !== 'trio.v3' && !i.id.startsWith('duo'));

  it('names the keepers the manifest no longer asks for: a variant beyond variants, or an item gone', () => {
    const rule = new KeptTakes(lowered, [
      keeper('duo', 'duo.v2', 2),
      keeper('solo', 'solo', 1),
      keeper('trio', 'trio.v3', 1),
    ]);
    expect(rule.outside()).toEqual([
      { keeper: keeper('duo', 'duo.v2', 2), variant: 2, why: 'item_not_asked' },
      { keeper: keeper('trio', 'trio.v3', 1), variant: 3, why: 'variant_not_asked' },
    ]);
    expect(new KeptTakes(items, [keeper('trio', 'trio.v3', 1)]).outside()).toEqual([]);
    // A kept item the manifest names, but as another item's: outside its own item all the same.
    expect(new KeptTakes(items, [keeper('duo', 'trio.v2', 1)]).outside()).toEqual([
      { keeper: keeper('duo', 'trio.v2', 1), variant: 1, why: 'variant_not_asked' },
    ]);
  });

  it('keeps a kept take outside the manifest its item keeper: grouped with it, marked kept, still kept', () => {
    const rule = new KeptTakes(lowered, [keeper('trio', 'trio.v3', 1), keeper('duo', 'duo.v2', 2)]);
    expect(rule.groupOf('trio.v3')).toBe('trio');
    expect(rule.groupOf('duo.v2')).toBe('duo');
    // An item the manifest no longer names that no keeper names is its own.
    expect(rule.groupOf('duo')).toBe('duo');
    expect(rule.groupOf('gone.v2')).toBe('gone.v2');
    expect(rule.inManifest('trio.v2')).toBe(true);
    expect(rule.inManifest('trio.v3')).toBe(false);
    expect(rule.recorded({ itemId: 'trio.v3', take: 1 })).toBe(true);
    expect(rule.recorded({ itemId: 'trio.v2', take: 1 })).toBe(false);
    expect(rule.recorded({ itemId: 'duo.v2', take: 2 })).toBe(true);
    expect(rule.keptTake('trio', [])).toEqual({ itemId: 'trio.v3', take: 1 });
    // Kept no more (keep trio:2): its own group unless told, and then not the kept take.
    const changed = new KeptTakes(lowered, [keeper('trio', 'trio.v2', 1)]);
    expect(changed.recorded({ itemId: 'trio.v3', take: 1 })).toBeNull();
    expect(changed.recorded({ itemId: 'trio.v3', take: 1 }, 'trio')).toBe(false);
    expect(changed.recorded({ itemId: 'trio.v2', take: 1 }, 'trio')).toBe(true);
    // The item still has its keeper: it is not counted among those to choose for.
    expect(rule.withoutKeeper()).toEqual([]);
    // Raised back to 3 variants: the same keeper is the item's again, inside the manifest.
    const raised = new KeptTakes(items, [keeper('trio', 'trio.v3', 1)]);
    expect([raised.inManifest('trio.v3'), raised.outside(), raised.groupOf('trio.v3')]).toEqual([
      true,
      [],
      'trio',
    ]);
  });

  it('reads the variant number of a ledger item from its id, 1 for the item itself or anything else', () => {
    expect(variantNumber('hero', 'hero')).toBe(1);
    expect(variantNumber('hero', 'hero.v3')).toBe(3);
    expect(variantNumber('hero', 'hero.v12')).toBe(12);
    for (const other of ['hero.v0', 'hero.v03', 'hero.v2x', 'hero.x.v2', 'xhero.v2', 'heroic.v2', 'hero.v'])
      expect(variantNumber('hero', other), other).toBe(1);
  });
});
