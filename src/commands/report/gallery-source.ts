import type { StreamReads } from '../../documents/gallery/page-stream.js';
import { sidecarPathFor } from '../../downloads/sidecar.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { KeeperRecord } from '../../ledger/records.js';

/**
 * What the gallery reads of a batch's ledger (docs/gallery.md): the sums and warnings read once,
 * the keepers, and one entry per item, streamed in the manifest's order (page-stream.ts).
 */
export type GallerySource = StreamReads & { keepers: KeeperRecord[] };

export async function gallerySource(ledger: Ledger | null, ids: readonly string[]): Promise<GallerySource> {
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

/**
 * Which saved files bear one of the names a page would be written to, or have a sidecar there:
 * the only saved files a target's check needs (gallery-target.ts, gallery-s3.ts), picked from the
 * paths as they stream past rather than from 100,000 held.
 */
export class SavedNames {
  readonly hits: string[] = [];
  readonly #names: Set<string>;

  constructor(names: readonly string[]) {
    this.#names = new Set(names);
  }

  see(path: string): void {
    if (this.#names.size === 0) return;
    // Both spellings of a sidecar's name: the local check's and the bucket's (sidecar.ts).
    const local = path.replace(/\.[^./\\]*$/, '.json');
    if (this.#names.has(path) || this.#names.has(sidecarPathFor(path)) || this.#names.has(local))
      this.hits.push(path);
  }
}

/** The same from the ledger's list of saved files (itemFilePaths), for a check made before the page. */
export async function savedFilesNamed(ledger: Ledger | null, names: readonly string[]): Promise<string[]> {
  const watch = new SavedNames(names);
  if (ledger === null || names.length === 0) return watch.hits;
  for await (const [, path] of ledger.itemFilePaths()) watch.see(path);
  return watch.hits;
}
