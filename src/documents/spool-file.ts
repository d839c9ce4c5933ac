import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/**
 * A text written to a temporary file a piece at a time and read back in blocks: where a document's
 * parts wait while the ledger streams past until the document can be written in order (the
 * gallery page, gallery-spool.ts; a plan's or a status's items, spooled-items.ts). The caller
 * owns the file's folder and removes it.
 */

/**
 * Bytes gathered before one write: few system calls. Each text is encoded into it at once, so the
 * strings die young; gathered as strings, the ones a scavenge found waiting were promoted, and
 * 100,000 items left about 100 MB of dead text in the old generation.
 */
const BUFFER_BYTES = 256 * 1024;
/** A part is read back into one buffer of this size, which each block read reuses. */
export const READ_BYTES = 256 * 1024;

export class SpoolFile {
  count = 0;
  #fd: number | null = null;
  #buffer: Buffer | null = null;
  #used = 0;

  /** `separator` goes between two texts added (a comma for a JSON array's elements, a line break for lines). */
  constructor(
    readonly path: string,
    private readonly separator = ',',
  ) {}

  add(text: string): void {
    if (this.count > 0) this.#put(this.separator);
    this.#put(text);
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

  /**
   * What was written, in blocks that share `buffer`: the caller is done with a block before it asks
   * for the next. Flushed first; nothing when nothing was added.
   */
  *blocks(buffer: Buffer): Generator<Buffer> {
    this.flush();
    if (this.count === 0) return;
    const fd = openSync(this.path, 'r');
    try {
      for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer))
        yield buffer.subarray(0, read);
    } finally {
      closeSync(fd);
    }
  }
}
