import { sidecarPathFor } from '../../downloads/sidecar.js';
import type { RecordReads } from '../../ledger/index.js';

/**
 * Which saved files bear one of the names a command would write to, or have a sidecar there: the
 * only saved files a named target's check needs (named-target.ts, the gallery's bucket check),
 * picked from the paths as they stream past rather than from 100,000 held.
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

/** The same from the ledger's list of saved files (itemFilePaths), for a check made before writing. */
export async function savedFilesNamed(
  ledger: RecordReads | null,
  names: readonly string[],
): Promise<string[]> {
  const watch = new SavedNames(names);
  if (ledger === null || names.length === 0) return watch.hits;
  for await (const [, path] of ledger.itemFilePaths()) watch.see(path);
  return watch.hits;
}
