import type { TakeCheck } from './output-check.js';

/**
 * What one run's checks of saved takes came to (docs/checks.md): the takes left unchecked (said
 * once, at its end) and, per item, the takes that failed (what its re-rolls are counted against).
 */
export class CheckTally {
  #unchecked = 0;
  readonly #failed = new Map<string, number>();

  counted(itemId: string, check: TakeCheck): TakeCheck {
    if (check.outcome === 'unchecked') this.#unchecked += 1;
    if (check.outcome === 'failed') this.#failed.set(itemId, this.failedTakes(itemId) + 1);
    return check;
  }

  get unchecked(): number {
    return this.#unchecked;
  }

  /** The item's takes that failed their check in this run. */
  failedTakes(itemId: string): number {
    return this.#failed.get(itemId) ?? 0;
  }
}
