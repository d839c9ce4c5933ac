import { outputChild } from './s3-uri.js';
import type { ManifestItem } from './types.js';

/**
 * Files in an output folder that a ledger did not write, and the items whose names they take.
 * Pure: the caller lists the folder and reads the ledger's saved paths.
 */

const stem = (path: string) => path.replace(/\.[^./\\]*$/, '');

/**
 * The files of `present` that no saved path names: neither the file itself nor a side file of it
 * (`<name>.json` provenance shares its video's name without the extension). A download's
 * temporary `.mbtmp` file is in progress, not foreign.
 */
export function foreignFiles(
  present: readonly string[],
  saved: Iterable<readonly [string, string]>,
): string[] {
  const owned = new Set<string>();
  const stems = new Set<string>();
  for (const [, path] of saved) {
    owned.add(path);
    stems.add(stem(path));
  }
  return present.filter((path) => !owned.has(path) && !stems.has(stem(path)) && !path.endsWith('.mbtmp'));
}

/**
 * The items among `items` whose output would land on one of the `foreign` files (absolute paths):
 * `<name>.<ext>`, `<name>-<n>.<ext>` when a job has several files, or the `<name>.json` sidecar.
 * By item id, each with the files in its way, in the order given.
 */
export function itemsInTheWay(
  outputDir: string,
  items: Iterable<Pick<ManifestItem, 'id' | 'name'>>,
  foreign: readonly string[],
): Map<string, string[]> {
  const byBase = new Map<string, string>();
  for (const item of items) byBase.set(outputBase(outputDir, item), item.id);
  const found = new Map<string, string[]>();
  for (const path of foreign) {
    const base = stem(path);
    const id = byBase.get(base) ?? byBase.get(base.replace(/-\d+$/, ''));
    if (id === undefined) continue;
    found.set(id, [...(found.get(id) ?? []), path]);
  }
  return found;
}

/**
 * The rule `run` (runner/names-in-the-way.ts) and `plan` (batch/plan-decisions/plan-held-back.ts) share:
 * of the items a run would submit or rename, those it holds back because a file `present` in the
 * output folder takes their name and the ledger did not write it (no `saved` path names it or its
 * video). Those are never sent: nothing is paid for that could only land on someone else's file.
 */
export function namesTaken(
  outputDir: string,
  items: ReadonlyArray<Pick<ManifestItem, 'id' | 'name'>>,
  present: readonly string[],
  saved: Iterable<readonly [string, string]>,
): Map<string, string[]> {
  const candidates = itemsInTheWay(outputDir, items, present);
  if (candidates.size === 0) return candidates;
  return itemsInTheWay(outputDir, items, foreignFiles([...candidates.values()].flat(), saved));
}

/** Where an item's files go, without their extension. */
const outputBase = (outputDir: string, item: Pick<ManifestItem, 'id' | 'name'>) =>
  outputChild(outputDir, item.name ?? item.id);

/**
 * Whether some of `foreign` may be in an item's way (itemsInTheWay finds which): a walk through a
 * million items keeps only the few that can be.
 */
export function mayBeInTheWay(
  outputDir: string,
  foreign: readonly string[],
): (item: Pick<ManifestItem, 'id' | 'name'>) => boolean {
  const bases = new Set(foreign.flatMap((path) => [stem(path), stem(path).replace(/-\d+$/, '')]));
  return (item) => bases.size > 0 && bases.has(outputBase(outputDir, item));
}
