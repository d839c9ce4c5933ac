import type { TakeCheck } from './output-check.js';

/**
 * What one run's checks of saved takes came to (docs/checks.md): the takes left unchecked (said
 * once, at its end) and, per item, the takes that failed (what its re-rolls are counted against).
 */
export class CheckTally {
  #unchecked = 0;
  #ownVerdict = false;
  readonly #failed = new Map<string, number>();

  counted(itemId: string, check: TakeCheck): TakeCheck {
    if (check.own) this.#ownVerdict = true;
    if (check.outcome === 'unchecked') this.#unchecked += 1;
    if (check.outcome === 'failed') this.#failed.set(itemId, this.failedTakes(itemId) + 1);
    return check;
  }

  /** Whether a check of your own has given a verdict in this run (submit.ts holds slots until then). */
  get ownVerdictSeen(): boolean {
    return this.#ownVerdict;
  }

  get unchecked(): number {
    return this.#unchecked;
  }

  /** A take of the item's request that failed its check before this run (restore.ts). */
  failedBefore(itemId: string, takes = 1): void {
    this.#failed.set(itemId, this.failedTakes(itemId) + takes);
  }

  /** The item's takes of its current request that failed their check, before and in this run. */
  failedTakes(itemId: string): number {
    return this.#failed.get(itemId) ?? 0;
  }
}
