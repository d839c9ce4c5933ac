/**
 * The bound on outputs paid for and not yet saved (docs/performance.md, "Saving keeps up with
 * paying"): every job is paid at its POST, and what it made is money at risk until its files are
 * on disk (links expire in an hour, outputs are deleted 48 hours after they finish). A run whose
 * saving falls behind its paying stops submitting at the bound instead of piling that value up.
 */

/** The bound a run holds to: the setting, else twice its slot limit. */
export function unsavedBound(setting: number | null | undefined, slotLimit: number): number {
  return setting ?? 2 * Math.max(1, slotLimit);
}

/**
 * Tracks whether submitting is held at the bound, so that the run says so once when it starts
 * and once when it ends, not on every turn of the loop.
 */
export class UnsavedBound {
  readonly #setting: number | null;
  #held = false;

  constructor(setting: number | null | undefined) {
    this.#setting = setting ?? null;
  }

  /** The bound for a run with this many slots (the slot limit is learnt as the run goes). */
  bound(slotLimit: number): number {
    return unsavedBound(this.#setting, slotLimit);
  }

  /**
   * How many submissions fit under the bound: paid and unsaved are the jobs unfinished (each
   * paid, its output still to come) and the finished ones waiting for or in their download.
   */
  room(slotLimit: number, unfinished: number, unsaved: number): number {
    return Math.max(0, this.bound(slotLimit) - unfinished - unsaved);
  }

  get held(): boolean {
    return this.#held;
  }

  /** Records whether submitting is held now; true when that changed. */
  hold(held: boolean): boolean {
    const changed = held !== this.#held;
    this.#held = held;
    return changed;
  }
}
