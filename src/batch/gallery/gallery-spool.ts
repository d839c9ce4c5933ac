import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STATES_IN_ORDER } from '../../documents/gallery/groups.js';
import type { PageFacts } from '../../documents/gallery/page.js';
import { type GallerySink, pageLayout } from '../../documents/gallery/page-stream.js';
import { READ_BYTES, SpoolFile } from '../../documents/spool-file.js';
import type { ItemState } from '../../ledger/index.js';

/**
 * Where the gallery's data waits while the ledger streams past (docs/performance.md, "The gallery
 * page"): the page shows its tiles problems first, and its totals before any tile, but the items
 * come in manifest order and the totals are known only after the last. So each state's tiles and
 * the attempts' rows go to a file of their own in a temporary folder, and the page is then written
 * in order from them: memory holds a megabyte of text at a time, whatever the batch's size, where
 * the page of 100,000 items is about 55 MB. The folder is removed by `close`.
 */

export class GallerySpool implements GallerySink {
  readonly #dir = mkdtempSync(join(tmpdir(), 'mediabatch-gallery-'));
  readonly #tiles: Record<ItemState, SpoolFile>;
  readonly #rows = new SpoolFile(join(this.#dir, 'attempts'));

  /** `saved` sees every file the ledger records as the entries stream past (SavedNames). */
  constructor(private readonly saved: { see(path: string): void } | null = null) {
    this.#tiles = Object.fromEntries(
      STATES_IN_ORDER.map((state) => [state, new SpoolFile(join(this.#dir, state))]),
    ) as Record<ItemState, SpoolFile>;
  }

  tile(state: ItemState, json: string): void {
    this.#tiles[state].add(json);
  }

  attempt(json: string): void {
    this.#rows.add(json);
  }

  file(path: string): void {
    this.saved?.see(path);
  }

  /**
   * The whole page, in order: its text a piece at a time, each part read back from its file. A
   * part's chunks share one buffer: the caller is done with a chunk before it asks for the next.
   */
  *page(facts: PageFacts): Generator<string | Buffer> {
    for (const part of [...Object.values(this.#tiles), this.#rows]) {
      part.flush();
      part.close();
    }
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    for (const piece of pageLayout(facts, this.#tiles, this.#rows)) {
      if (typeof piece === 'string') {
        yield piece;
        continue;
      }
      yield* piece.blocks(buffer);
    }
  }

  /** The whole page as bytes, for one upload into a bucket (each chunk copied: see page). */
  bytes(facts: PageFacts): Buffer {
    const chunks: Buffer[] = [];
    for (const piece of this.page(facts)) chunks.push(Buffer.from(piece));
    return Buffer.concat(chunks);
  }

  close(): void {
    for (const part of [...Object.values(this.#tiles), this.#rows]) part.close();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
