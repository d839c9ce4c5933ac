import type { StreamReads } from '../../documents/gallery/page-stream.js';
import type { KeeperRecord, ReadingLedger, RecordReads, TakeLedger } from '../../ledger/index.js';

/**
 * What the gallery reads of a batch's ledger (docs/gallery.md): the sums and warnings read once,
 * the keepers, and one entry per item, streamed in the manifest's order (page-stream.ts).
 */
export type GallerySource = StreamReads & { keepers: KeeperRecord[] };

export async function gallerySource(
  ledger: (RecordReads & ReadingLedger & TakeLedger) | null,
  ids: readonly string[],
): Promise<GallerySource> {
  if (ledger === null)
    return {
      entries: streamOf(
        ids.map((itemId) => ({ itemId, state: null, errorCode: null, errorMessage: null, attempts: [] })),
      ),
      money: { chargedMicros: 0, refundedMicros: 0, reservedMicros: 0 },
      unsaved: [],
      keepers: [],
    };
  return {
    money: await ledger.moneyTotals(),
    unsaved: await ledger.unsavedSucceeded(),
    keepers: await ledger.keepers(),
    // A page of ids at a time, without the requests' bodies (ledger/gallery-entries.ts).
    entries: ledger.itemHistories(ids),
  };
}

async function* streamOf<T>(rows: Iterable<T>): AsyncIterable<T> {
  yield* rows;
}
