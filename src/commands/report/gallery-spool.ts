import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STATES_IN_ORDER } from '../../documents/gallery/groups.js';
import type { PageFacts } from '../../documents/gallery/page.js';
import { type DataPart, type GallerySink, pageLayout } from '../../documents/gallery/page-stream.js';
import type { ItemState } from '../../ledger/records.js';

/**
 * Where the gallery's data waits while the ledger streams past (docs/performance.md, "The gallery
 * page"): the page shows its tiles problems first, and its totals before any tile, but the items
 * come in manifest order and the totals are known only after the last. So each state's tiles and
 * the attempts' rows go to a file of their own in a temporary folder, and the page is then written
 * in order from them: memory holds a megabyte of text at a time, whatever the batch's size, where
 * the page of 100,000 items is about 55 MB. The folder is removed by `close`.
 */

/**
 * Bytes gathered before one write: few system calls. Each text is encoded into it at once, so the
 * strings die young; gathered as strings, the ones a scavenge found waiting were promoted, and
 * 100,000 items left about 100 MB of dead text in the old generation.
 */
const BUFFER_BYTES = 256 * 1024;
/** The page's parts are read back into one buffer of this size, which each chunk written reuses. */
const READ_BYTES = 256 * 1024;

class SpoolFile implements DataPart {
  count = 0;
  #fd: number | null = null;
  #buffer: Buffer | null = null;
  #used = 0;

  constructor(readonly path: string) {}

  add(json: string): void {
    if (this.count > 0) this.#put(',');
    this.#put(json);
    this.count += 1;
  }

  #put(text: string): void {
    this.#buffer ??= Buffer.allocUnsafe(BUFFER_BYTES);
    // Three bytes a UTF-16 unit at most: a text that might not fit is written on its own.
    if (this.#used + text.length * 3 > BUFFER_BYTES) {
      this.flush();
      if (text.length * 3 > BUFFER_BYTES) {
        writeSync(this.#open(), text);
        return;
      }
    }
    this.#used += this.#buffer.write(text, this.#used);
  }

  #open(): number {
    this.#fd ??= openSync(this.path, 'wx', 0o600);
    return this.#fd;
  }

  flush(): void {
    if (this.#buffer === null || this.#used === 0) return;
    writeSync(this.#open(), this.#buffer, 0, this.#used);
    this.#used = 0;
  }

  close(): void {
    this.#buffer = null;
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}

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
      const fd = openSync(piece.path, 'r');
      try {
        for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer))
          yield buffer.subarray(0, read);
      } finally {
        closeSync(fd);
      }
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
