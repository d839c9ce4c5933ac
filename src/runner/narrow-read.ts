/** Reads of a few rows of a shared batch, by the ids of what a runner adopts (restore.ts). */

/**
 * The ids to read by, or undefined (read the whole batch) past a few thousand: a list that long
 * is most of the batch anyway, and one statement's list stays small.
 */
export function narrowRead<T>(ids: readonly T[]): readonly T[] | undefined {
  return ids.length <= NARROW_READ_MAX ? ids : undefined;
}

const NARROW_READ_MAX = 2000;
