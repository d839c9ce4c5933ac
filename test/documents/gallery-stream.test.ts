import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entriesOfView, type GalleryEntry } from '../../src/documents/gallery/entries.js';
import type { GalleryKeeper } from '../../src/documents/gallery/groups.js';
import { buildGallery, type GalleryOptions } from '../../src/documents/gallery/model.js';
import { renderGallery } from '../../src/documents/gallery/page.js';
import { type DataPart, pageLayout, streamGallery } from '../../src/documents/gallery/page-stream.js';
import { attemptHistory } from '../../src/documents/render-text.js';
import { buildStatusReport } from '../../src/documents/status-report.js';
import { type LedgerView, summarizeView } from '../../src/documents/status-view.js';
import type { AttemptRecord, FileRecord, ItemRecord, ItemState } from '../../src/ledger/records.js';
import type { ManifestItem } from '../../src/manifest/index.js';
import { attempt, item, manifest, record } from './records.js';

/**
 * The page a run writes as its ledger streams past (page-stream.ts) is byte for byte the page
 * buildGallery and renderGallery make of the same ledger held whole: for any mix of variants,
 * takes, failures, refunds, keepers, items the ledger does not know and attempts of items the
 * manifest no longer lists, with local links and with presigned ones (a page that travels).
 */

const STATES: ItemState[] = [
  'done',
  'failed',
  'expired',
  'budget_exceeded',
  'in_flight',
  'pending',
  'checks_failed',
];
const NOW = Date.parse('2030-01-01T02:00:00.000Z');

interface Shape {
  variants: number;
  /** Per ledger item: its row's state (null: no row), and its attempts. */
  ledger: Array<{
    state: ItemState | null;
    attempts: Array<{ take: number; saved: boolean; money: number }>;
  }>;
}

const attemptShape = fc.record({
  take: fc.integer({ min: 1, max: 3 }),
  saved: fc.boolean(),
  money: fc.nat(3),
});
const shape: fc.Arbitrary<Shape> = fc.integer({ min: 1, max: 3 }).chain((variants) =>
  fc.record({
    variants: fc.constant(variants),
    ledger: fc.array(
      fc.record({
        state: fc.option(fc.constantFrom(...STATES)),
        attempts: fc.array(attemptShape, { maxLength: 3 }),
      }),
      { minLength: variants, maxLength: variants },
    ),
  }),
);

/** A manifest and its ledger from the shapes; `orphans` items only the ledger knows. */
function ledgerOf(shapes: Shape[], orphans: number) {
  const items: ManifestItem[] = [];
  const records: ItemRecord[] = [];
  const attempts: AttemptRecord[] = [];
  const files: FileRecord[] = [];
  const add = (entry: ManifestItem, ledger: Shape['ledger'][number]) => {
    if (ledger.state !== null)
      records.push(record(entry, ledger.state, { errorCode: 'content_rejected', errorMessage: 'no <b>' }));
    ledger.attempts.forEach((made, seq) => {
      const row = attempt({
        itemId: entry.id,
        seq: seq + 1,
        take: made.take,
        filesSaved: made.saved,
        amountMicros: made.money * 100_000,
        refundedMicros: made.money === 3 ? 100_000 : 0,
        errorCode: made.saved ? null : 'job_failed',
        errorMessage: made.saved ? null : 'it broke',
        completedAt: made.saved ? '2030-01-01T00:00:42.000Z' : null,
      });
      attempts.push(row);
      if (made.saved)
        for (const idx of [0, 1]) files.push(file(row.id, idx, `/work/out/unit/${entry.id}.${idx}.mp4`));
    });
  };
  shapes.forEach((one, n) => {
    for (let v = 1; v <= one.variants; v += 1) {
      const id = v === 1 ? `shot-${n}` : `shot-${n}.v${v}`;
      const variant =
        one.variants > 1 ? { variant: { of: `shot-${n}`, number: v, count: one.variants } } : {};
      const entry = item(id, { seconds: 4 }, { matrix: { style: n % 2 ? 'ink' : 'noir' }, ...variant });
      items.push(entry);
      add(entry, one.ledger[v - 1]!);
    }
  });
  for (let n = 0; n < orphans; n += 1)
    add(item(`gone-${orphans - n}`, {}), {
      state: n % 2 ? 'done' : null,
      attempts: [{ take: 1, saved: true, money: 1 }],
    });
  return { batch: manifest(items, 5_000_000), view: { items: records, attempts, files } };
}

const file = (attemptId: number, idx: number, path: string): FileRecord => ({
  attemptId,
  idx,
  path,
  bytes: 10,
  sha256: 'a'.repeat(64),
  savedAt: '2030-01-01T00:00:00.000Z',
});

function options(travels: boolean, keepers: GalleryKeeper[]): GalleryOptions {
  return {
    href: (path) => (travels && path.includes('.1.') ? `https://b.example/${path}?X-Amz-Signature=s` : path),
    manifestArg: '/work/batch.yaml',
    generatedAt: '2030-01-01T00:00:00.000Z',
    ledger: { path: '/work/.mediabatch/unit.sqlite', exists: true, service: 'the sandbox' },
    keepers,
    ledgerArgs: ['--ledger', '/work/.mediabatch/unit.sqlite'],
    links: travels
      ? { expireAt: '2030-01-08T00:00:00.000Z', refreshArgs: ['report', '/work/batch.yaml'] }
      : null,
  };
}

function whole(batch: ReturnType<typeof ledgerOf>['batch'], view: LedgerView, given: GalleryOptions): string {
  const order = new Map(batch.items.map((entry, index) => [entry.id, index]));
  const model = buildGallery(batch, view, buildStatusReport(batch, view, NOW), given);
  return renderGallery(model, attemptHistory(view.attempts, order));
}

async function streamed(
  batch: ReturnType<typeof ledgerOf>['batch'],
  view: LedgerView,
  given: GalleryOptions,
  entries: GalleryEntry[],
): Promise<string> {
  type Part = DataPart & { texts: string[] };
  const part = (): Part => ({ count: 0, texts: [] });
  const tiles = Object.fromEntries(STATES.map((state) => [state, part()])) as Record<ItemState, Part>;
  const rows = part();
  const keep = (into: Part, json: string) => {
    into.count += 1;
    into.texts.push(json);
  };
  const { money, unsaved } = summarizeView(view);
  async function* stream() {
    yield* entries;
  }
  const facts = await streamGallery(
    batch,
    { entries: stream(), money, unsaved },
    given,
    { tile: (state, json) => keep(tiles[state], json), attempt: (json) => keep(rows, json) },
    NOW,
  );
  return [...pageLayout(facts, tiles, rows)]
    .map((piece) => (typeof piece === 'string' ? piece : (piece as Part).texts.join(',')))
    .join('');
}

describe('the gallery written as the ledger streams past', () => {
  it('is the page made from the whole ledger, byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(shape, { maxLength: 8 }),
        fc.nat(2),
        fc.boolean(),
        fc.boolean(),
        async (shapes, orphans, travels, withKeeper) => {
          const { batch, view } = ledgerOf(shapes, orphans);
          const kept = view.attempts.find((made) => made.filesSaved);
          const keepers: GalleryKeeper[] =
            withKeeper && kept
              ? [
                  {
                    itemId: kept.itemId.replace(/\.v\d$/, ''),
                    keptItemId: kept.itemId,
                    take: kept.take ?? 1,
                    chosenAt: '2030',
                  },
                ]
              : [];
          const given = options(travels, keepers);
          const ids = batch.items.map((entry) => entry.id);
          expect(await streamed(batch, view, given, entriesOfView(view, ids))).toBe(
            whole(batch, view, given),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it('takes a stream that leaves out the items the ledger does not know', async () => {
    const { batch, view } = ledgerOf(
      [
        { variants: 1, ledger: [{ state: 'done', attempts: [{ take: 1, saved: true, money: 2 }] }] },
        {
          variants: 2,
          ledger: [
            { state: null, attempts: [] },
            { state: null, attempts: [] },
          ],
        },
        { variants: 1, ledger: [{ state: 'failed', attempts: [{ take: 1, saved: false, money: 0 }] }] },
      ],
      1,
    );
    const given = options(false, []);
    const known = entriesOfView(
      view,
      batch.items.map((entry) => entry.id),
    ).filter((entry) => entry.state !== null || entry.attempts.length > 0);
    expect(known.map((entry) => entry.itemId)).toEqual(['shot-0', 'shot-2', 'gone-1']);
    expect(await streamed(batch, view, given, known)).toBe(whole(batch, view, given));
  });
});
