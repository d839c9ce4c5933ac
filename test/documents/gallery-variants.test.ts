import { describe, expect, it } from 'vitest';
import { buildGallery } from '../../src/documents/gallery/model.js';
import { renderGallery } from '../../src/documents/gallery/page.js';
import { buildStatusReport } from '../../src/documents/status-report.js';
import type { FileRecord } from '../../src/ledger/records.js';
import type { ManifestItem } from '../../src/manifest/index.js';
import { galleryData } from '../support/gallery-data.js';
import { attempt, item, manifest, record } from './records.js';

/**
 * An item asked for three takes (`variants: 3`) is three ledger items; the gallery's model makes
 * them one group, drawn as one tile with the variants side by side, and marks the ledger's keeper.
 */

const variant = (of: string, number: number, count = 3): ManifestItem =>
  item(
    number === 1 ? of : `${of}.v${number}`,
    { seconds: 4, prompt: 'A fox at dusk' },
    {
      variant: { of, number, count },
    },
  );
const fox = [variant('fox', 1), variant('fox', 2), variant('fox', 3)];
const owl = item('owl', { seconds: 4 });
const batch = manifest([...fox, owl]);

const took = (itemId: string, take: number, amountMicros = 200_000) =>
  attempt({ itemId, take, amountMicros, filesSaved: true, completedAt: '2030-01-01T00:01:00.000Z' });
const attempts = [
  took('fox', 1),
  took('fox.v2', 1),
  took('fox.v2', 2),
  attempt({ itemId: 'fox.v3', jobStatus: 'failed', errorCode: 'content_rejected', amountMicros: 0 }),
  took('owl', 1),
];
const file = (attemptId: number, path: string): FileRecord => ({
  attemptId,
  idx: 0,
  path,
  bytes: 10,
  sha256: 'a'.repeat(64),
  savedAt: '2030-01-01T00:00:00.000Z',
});
const view = {
  items: [
    record(fox[0]!, 'done'),
    record(fox[1]!, 'done'),
    record(fox[2]!, 'failed', { errorCode: 'content_rejected', errorMessage: 'no' }),
    record(owl, 'done'),
  ],
  attempts,
  files: [
    file(attempts[0]!.id, '/work/out/unit/fox.mp4'),
    file(attempts[1]!.id, '/work/out/unit/fox.v2.take1.mp4'),
    file(attempts[2]!.id, '/work/out/unit/fox.v2.mp4'),
    file(attempts[4]!.id, '/work/out/unit/owl.mp4'),
  ],
};

function model(keepers: Parameters<typeof buildGallery>[3]['keepers'] = []) {
  return buildGallery(batch, view, buildStatusReport(batch, view, 0), {
    href: (path) => path.replace('/work/out/unit/', ''),
    manifestArg: 'batch.yaml',
    generatedAt: '2030-01-01T00:00:00.000Z',
    ledger: { path: '/work/.mediabatch/unit.sqlite', exists: true, service: 'the sandbox' },
    keepers,
    ledgerArgs: ['--sandbox'],
  });
}

describe('variants in the gallery', () => {
  it('makes one group per manifest item: the variants in order, the worst state, the summed cost', () => {
    const { groups, cards, states } = model();
    expect(groups.map((group) => [group.id, group.state, group.costUsd])).toEqual([
      ['fox', 'failed', '0.600000'], // a failed variant puts the group with the failed items
      ['owl', 'done', '0.200000'],
    ]);
    expect(groups[0]!.cards.map((card) => [card.id, card.variant?.number, card.state])).toEqual([
      ['fox', 1, 'done'],
      ['fox.v2', 2, 'done'],
      ['fox.v3', 3, 'failed'],
    ]);
    expect(cards.map((card) => card.id)).toEqual(['fox', 'fox.v2', 'fox.v3', 'owl']);
    expect(states).toEqual(['failed', 'done']);
  });

  it('gives the page one tile per item: variants side by side, an item without them as before', () => {
    const html = renderGallery(model(), []);
    const { tiles } = galleryData(html);
    expect(tiles.map((tile) => tile.id)).toEqual(['fox', 'owl']);
    const [foxTile, owlTile] = tiles as [(typeof tiles)[0], (typeof tiles)[0]];
    expect(foxTile).toMatchObject({ state: 'failed', cost: '$0.60', prompt: 'A fox at dusk', takes: [] });
    expect(
      foxTile.variants!.map((v) => [v.id, v.n, v.state, v.cost, v.takes.map((take) => take.files[0]?.href)]),
    ).toEqual([
      ['fox', 1, 'done', '$0.20', ['fox.mp4']],
      ['fox.v2', 2, 'done', '$0.40', ['fox.v2.mp4', 'fox.v2.take1.mp4']],
      ['fox.v3', 3, 'failed', '$0.00', []],
    ]);
    expect(foxTile.variants![2]!.error).toEqual({ code: 'content_rejected', message: 'no' });
    expect(owlTile).toMatchObject({ id: 'owl', variants: null, keeper: null });
    expect(owlTile.takes.map((take) => take.files[0]?.href)).toEqual(['owl.mp4']);
    // The toolbar counts tiles; the keep command names the batch's ledger as the run did.
    expect(html).toContain('<span id="shown-count">2</span> of 2 shown');
    expect(html).toContain('data-base="mediabatch keep batch.yaml --sandbox"');
  });

  it("marks the ledger's keeper as keep.txt writes it: N for a variant's newest take, N.T for an earlier one", () => {
    const at = (minute: number) => `2030-01-01T00:0${minute}:00.000Z`;
    const keeper = (keptItemId: string, take: number, minute: number, itemId = 'fox') => ({
      itemId,
      keptItemId,
      take,
      chosenAt: at(minute),
    });
    expect(model([keeper('fox.v2', 2, 1)]).groups[0]!.keeper).toBe('2');
    expect(model([keeper('fox.v2', 1, 1)]).groups[0]!.keeper).toBe('2.1');
    // The one chosen last counts; an item without variants is variant 1.
    expect(model([keeper('fox.v2', 2, 1), keeper('fox', 1, 2)]).groups[0]!.keeper).toBe('1');
    const tiles = galleryData(renderGallery(model([keeper('owl', 1, 1, 'owl')]), [])).tiles;
    expect(tiles.map((tile) => tile.keeper)).toEqual([null, '1']);
    // A keeper naming an item the manifest no longer groups there is not shown.
    expect(model([keeper('gone', 1, 1)]).groups[0]!.keeper).toBeNull();
  });
});
