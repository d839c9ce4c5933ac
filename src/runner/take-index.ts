import type { ReusableTake } from '../ledger/index.js';
import { requestKeyOfBody } from './request-key.js';

/**
 * Every saved take of a batch by its request key (request-key.ts): where a paid result is found
 * by what it is, whatever item, take number or file name holds it. It follows the run's own moves
 * (an earlier take kept under its take name, a take copied to another item), so that an item
 * looked up after another sees the files where they are now. Pure.
 */
export class TakeIndex {
  readonly #byKey = new Map<string, ReusableTake[]>();
  readonly #byAttempt = new Map<number, ReusableTake>();

  constructor(takes: readonly ReusableTake[], variantOf: (itemId: string) => number) {
    for (const take of takes) {
      const key = requestKeyOfBody(take.requestBody, variantOf(take.itemId));
      if (key !== null) this.add(key, take);
    }
  }

  /** Whether the index holds no take at all. */
  get empty(): boolean {
    return this.#byKey.size === 0;
  }

  /** A take saved now, under `key` (the copy a reuse placed is itself a take of that request). */
  add(key: string, take: ReusableTake): void {
    const copy = { ...take, files: take.files.map((file) => ({ ...file })) };
    const list = this.#byKey.get(key);
    if (list) list.push(copy);
    else this.#byKey.set(key, [copy]);
    this.#byAttempt.set(copy.attemptId, copy);
  }

  /**
   * The saved takes of this request, the item's own first, each group newest first; never
   * `current`, the attempt that already stands for the item.
   */
  find(key: string, itemId: string, current: number | null): ReusableTake[] {
    const found = (this.#byKey.get(key) ?? []).filter((take) => take.attemptId !== current);
    const newestFirst = (a: ReusableTake, b: ReusableTake) => b.attemptId - a.attemptId;
    return [
      ...found.filter((take) => take.itemId === itemId).sort(newestFirst),
      ...found.filter((take) => take.itemId !== itemId).sort(newestFirst),
    ];
  }

  /** Where a take's file is now (after `moved`), or null for a file the index does not hold. */
  pathOf(attemptId: number, idx: number): string | null {
    return this.#byAttempt.get(attemptId)?.files.find((file) => file.idx === idx)?.path ?? null;
  }

  /** A take's file now lives under another name. */
  moved(attemptId: number, idx: number, path: string): void {
    const file = this.#byAttempt.get(attemptId)?.files.find((each) => each.idx === idx);
    if (file) file.path = path;
  }
}

/**
 * Of a request's saved takes (TakeIndex.find's order: the item's own first, each group newest
 * first), the first whose job the service still holds by its word: named, and before its
 * `expires_at`. Where none is intact, that job's outputs are fetched again instead of buying the
 * request (held-results.ts); the one rule of `run` and `plan` (batch/plan-decisions/plan-reuses.ts).
 */
export function heldResultOf(takes: readonly ReusableTake[], nowMs: number): ReusableTake | undefined {
  return takes.find(
    (take) => take.jobId !== null && take.expiresAt !== null && Date.parse(take.expiresAt) > nowMs,
  );
}
