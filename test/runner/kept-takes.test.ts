import { describe, expect, it } from 'vitest';
import type { ManifestItem } from '../../src/manifest/index.js';
import { KeptTakes } from '../../src/runner/kept-takes.js';

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
});
