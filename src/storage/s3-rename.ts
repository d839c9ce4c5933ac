import { sidecarPathFor } from '../downloads/sidecar.js';
import type { NameMove } from './output-store.js';
import type { S3Objects } from './s3-objects.js';

/**
 * A renamed item's objects in a bucket (docs/storage.md): a bucket has no links, so each object is
 * copied server-side to its new key (its SHA-256 metadata kept) and checked there, and the old key
 * is deleted only once the ledger records the new one. As on disk, a new key holding anything
 * else is refused before anything is copied, and doing it again after a crash is harmless.
 */

type KeyOf = (uri: string) => string;

const refusal = (target: string) =>
  Object.assign(
    new Error(
      `refusing to overwrite ${target}: this ledger did not write it; move it elsewhere, then run again`,
    ),
    { code: 'EEXIST' },
  );

async function sidecars(objects: S3Objects, keyOf: KeyOf, move: NameMove) {
  const [from, to] = [keyOf(sidecarPathFor(move.from)), keyOf(sidecarPathFor(move.to))];
  return { from, to, was: await objects.getText(from), there: await objects.getText(to) };
}

export async function copyToNewNames(
  objects: S3Objects,
  keyOf: KeyOf,
  moves: readonly NameMove[],
): Promise<void> {
  for (const move of moves) {
    if (move.from === move.to) continue;
    const there = await objects.head(keyOf(move.to));
    if (there !== null && (there.bytes !== move.bytes || there.sha256 !== move.sha256))
      throw refusal(move.to);
    const side = await sidecars(objects, keyOf, move);
    if (side.there !== null && side.there !== side.was) throw refusal(sidecarPathFor(move.to));
  }
  for (const move of moves) {
    if (move.from === move.to) continue;
    const [from, to] = [keyOf(move.from), keyOf(move.to)];
    // A missing object is not copied: the run's check of saved files fetches it again there.
    if ((await objects.head(to)) === null && (await objects.head(from)) !== null) {
      await objects.copy(from, to);
      const placed = await objects.head(to);
      if (placed?.bytes !== move.bytes || placed.sha256 !== move.sha256)
        throw new Error(`${move.to} does not hold what ${move.from} held after the copy`);
    }
    const side = await sidecars(objects, keyOf, move);
    if (side.was !== null && side.there === null) await objects.copy(side.from, side.to);
  }
}

export async function deleteOldNames(
  objects: S3Objects,
  keyOf: KeyOf,
  moves: readonly NameMove[],
): Promise<void> {
  for (const move of moves) {
    if (move.from === move.to) continue;
    await objects.delete(keyOf(move.from));
    await objects.delete(keyOf(sidecarPathFor(move.from)));
  }
}
