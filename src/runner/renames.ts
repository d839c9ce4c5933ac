import type { AttemptRecord, FileRecord, ItemRecord } from '../ledger/index.js';

/**
 * A rename is a move, not a purchase (docs/manifest.md, "Renaming an item"). An item the manifest
 * no longer lists and a new item whose request hash (request.ts) is the same are one paid result
 * under a new name: the request hash leaves the id out, and the request is what was paid for.
 * Terraform asks for a `moved` block; here the request itself says it, so nothing is declared.
 * Pure: `plan` and `run` pair with the same rule.
 */

/** A removed item that holds a paid result; `order` is its latest attempt's id (when it was paid). */
export interface RemovedCandidate {
  id: string;
  hash: string;
  order: number;
}

/** A new item (no row, no attempt in the ledger), in manifest order. */
export interface NewCandidate {
  id: string;
  hash: string;
}

export interface Rename {
  from: string;
  to: string;
}

/**
 * Pairs removed and new items of equal hash one to one: for each hash, the new items in manifest
 * order take the removed ones in the order they were paid for (ties by id). Extra ones on either
 * side stay removed or new. The pairs come in manifest order of their new items.
 */
export function pairRenames(removed: readonly RemovedCandidate[], added: readonly NewCandidate[]): Rename[] {
  const pairing = new RenamePairing(removed);
  return added.flatMap((item) => pairing.pair(item) ?? []);
}

/**
 * pairRenames a new item at a time, in manifest order, for a plan whose items go past without
 * being held (commands/plan/plan-stream.ts): the pair a new item makes, or null.
 */
export class RenamePairing {
  readonly #waiting = new Map<string, RemovedCandidate[]>();
  readonly #taken = new Set<string>();

  constructor(removed: readonly RemovedCandidate[]) {
    const ordered = [...removed].sort(
      (a, b) => a.order - b.order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
    for (const candidate of ordered) {
      const queue = this.#waiting.get(candidate.hash);
      if (queue) queue.push(candidate);
      else this.#waiting.set(candidate.hash, [candidate]);
    }
  }

  pair(item: NewCandidate): Rename | null {
    // A new id listed twice (never, after manifest checks) is paired once.
    if (this.#taken.has(item.id)) return null;
    const next = this.#waiting.get(item.hash)?.shift();
    if (next === undefined) return null;
    this.#taken.add(item.id);
    return { from: next.id, to: item.id };
  }
}

const RUNNING = new Set<string | null>(['queued', 'running', 'succeeded']);

/**
 * Whether a removed item holds a paid result a new name can take over: its latest attempt answers
 * the item's request and its files are saved, or its job is still queued or running, or succeeded
 * and not yet saved (then the new item follows it and saves it under the new name). A failed,
 * expired, lost or refused item, or one whose only attempt went unanswered, is left as removed.
 */
export function holdsPaidResult(
  record: ItemRecord,
  latest: AttemptRecord | undefined,
): latest is AttemptRecord {
  if (latest === undefined || latest.state !== 'accepted') return false;
  if (latest.requestHash !== record.requestHash) return false;
  return latest.filesSaved || RUNNING.has(latest.jobStatus);
}

/**
 * Where one saved file of the renamed item goes: the same place relative to the new name as it had
 * to the old one. `newBase` is the new item's output path without extension; `file` is one of
 * `count` files of its attempt, made as take `take`. A file of the item's current take is at
 * `<base>[-<n>].<ext>`; an earlier take preserved beside it at `<base>[-<n>].take<N>.<ext>`. Null when
 * the file's path does not end the way it was saved (it was placed by other rules): it stays.
 */
export function renamedFilePath(
  file: Pick<FileRecord, 'path' | 'idx'>,
  count: number,
  take: number,
  newBase: string,
): string | null {
  const index = count > 1 ? `-${file.idx + 1}` : '';
  const slash = Math.max(file.path.lastIndexOf('/'), file.path.lastIndexOf('\\'));
  const dot = file.path.lastIndexOf('.');
  const ext = dot > slash + 1 ? file.path.slice(dot) : '';
  const rest = file.path.slice(0, file.path.length - ext.length);
  for (const suffix of [`${index}.take${take}`, index]) {
    // The stem before the suffix must be a whole name, not the empty end of a folder.
    if (!rest.endsWith(suffix) || rest.length === suffix.length) continue;
    const before = rest.charAt(rest.length - suffix.length - 1);
    if (before === '/' || before === '\\') continue;
    return `${newBase}${suffix}${ext}`;
  }
  return null;
}
