import { sidecarPathFor } from '../downloads/sidecar.js';
import type { Ledger } from '../ledger/ledger.js';
import type { KeeperRecord } from '../ledger/records.js';
import { entriesOfView, type GalleryEntry } from '../report/gallery/entries.js';
import type { StreamReads } from '../report/gallery/page-stream.js';

/**
 * What the gallery reads of a batch's ledger (docs/gallery.md): the sums and warnings read once,
 * the keepers, and one entry per item, streamed in the manifest's order (page-stream.ts).
 */
export type GallerySource = StreamReads & { keepers: KeeperRecord[] };

/**
 * The read the gallery asks of the ledger (docs/performance.md, "The gallery page"): an entry
 * for each of `ids` in their order, then for every other item the batch's ledger knows in id
 * order, each with its row's state and error and every attempt by seq, without the request body,
 * hash or variables, with its files' paths in index order. SQLite walks the ids as itemExports
 * does (json_each outer, attempts by their (batch_id, item_id, seq) index, files by their key),
 * so 100,000 items stream without being held.
 */
export type GalleryEntriesRead = (ids: readonly string[]) => AsyncIterable<GalleryEntry>;

/**
 * The ledger's door (ledger.ts) does not have it yet: a ledger that offers it as `galleryEntries`
 * is read that way; any other is read whole for now (entriesFromWholeLedger), which is the cost
 * the read removes.
 */
type OffersEntries = Ledger & { galleryEntries?: GalleryEntriesRead };

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
  const read = (ledger as OffersEntries).galleryEntries;
  return {
    money: await ledger.moneyTotals(),
    unsaved: await ledger.unsavedSucceeded(),
    keepers: await ledger.keepers(),
    entries: read ? read.call(ledger, ids) : entriesFromWholeLedger(ledger, ids),
  };
}

/**
 * The entries from the whole ledger in memory: every attempt with its request body, for a moment.
 * At 100,000 attempts that is about 260 MB (docs/performance.md); the entries keep none of it.
 */
async function* entriesFromWholeLedger(ledger: Ledger, ids: readonly string[]): AsyncIterable<GalleryEntry> {
  const items = await ledger.listItems();
  const files = await ledger.listFiles();
  yield* entriesOfView({ items, attempts: await ledger.listAttempts(), files }, ids);
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
