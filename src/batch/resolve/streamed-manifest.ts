import { resolve } from 'node:path';
import { ManifestError } from '../../errors.js';
import {
  type Manifest,
  type ManifestHead,
  type ManifestItem,
  ManifestRead,
  NotStreamable,
  readManifestText,
  streamableHead,
  streamManifestChunks,
} from '../../manifest/index.js';
import { loadManifest, type ManifestSource } from './load-manifest.js';

/**
 * A manifest too large to hold (docs/api.md, "Batches too large to hold"): its settings, and its
 * items read from its files again at each walk, a chunk at a time, never all at once. `plan`,
 * `status` and `export` take one as they take a manifest held whole; openManifest() gives one.
 */
export interface StreamedManifest extends ManifestHead {
  readonly streamed: true;
  /**
   * One read of the items, in manifest order (chunks of `chunkSize`, default a thousand): the
   * iteration throws ManifestError at its end when the manifest has problems, so a caller acts on
   * the items only once it has ended, or reads them through first. `read` tells what the read
   * found: the ids, the count, and the warnings once it has ended.
   */
  readonly readItems: (
    chunkSize?: number,
    /**
     * The items were read through once already without a problem: this read holds no ids (its
     * `read.ids` is null), so that a command reading them twice holds them once.
     */
    again?: boolean,
  ) => { chunks: AsyncIterable<ManifestItem[]>; read: ManifestRead };
}

/**
 * A manifest file as a batch too large to hold is read: streamed where its items can be read a
 * chunk at a time (not a matrix, variants, list variables or `output.name`: docs/manifest.md), else
 * read whole, and then every problem in it throws ManifestError at once, as loadManifest throws.
 * A streamed one's items are checked at their first read.
 */
export function openManifest(source: ManifestSource): Manifest | StreamedManifest {
  if (typeof source !== 'string') return loadManifest(source);
  const file = resolve(source);
  const text = readManifestText(file);
  const head = 'text' in text ? streamableHead(file, text.text) : null;
  if (head === null || !('text' in text)) return loadManifest(file);
  return {
    ...head,
    streamed: true,
    readItems: (chunkSize?: number, again = false) => {
      const read = new ManifestRead(undefined, again);
      return { chunks: checkedChunks(file, text.text, read, chunkSize), read };
    },
  };
}

async function* checkedChunks(
  file: string,
  text: string,
  read: ManifestRead,
  chunkSize: number | undefined,
): AsyncGenerator<ManifestItem[]> {
  yield* streamManifestChunks(file, text, read, chunkSize);
  if (read.problems.size > 0) throw new ManifestError(read.problems.sorted());
}

/** Whether a manifest is one read a chunk at a time. */
export function isStreamed(manifest: Manifest | StreamedManifest): manifest is StreamedManifest {
  return (
    typeof manifest === 'object' &&
    manifest !== null &&
    (manifest as Partial<StreamedManifest>).streamed === true
  );
}

/**
 * The manifest held whole, for a call that cannot stream it: one given whole stays as it is; a
 * streamed one is read whole from its file, as loadManifest reads it.
 */
export function wholeManifest(manifest: Manifest | StreamedManifest): Manifest {
  return isStreamed(manifest) ? loadManifest(manifest.file) : manifest;
}

export { NotStreamable };
