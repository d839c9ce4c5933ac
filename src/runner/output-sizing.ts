/**
 * Part of the run state: whether the run knows how large an output is. When only the guessed size
 * did not fit the free space (save-estimate.ts), the run submits one job at a time until this
 * batch has saved a file; the size learnt from it is then judged once (size-check.ts), which either
 * gives back the full slot limit or stops submissions.
 */
export class OutputSizing {
  #phase: 'known' | 'guessing' | 'checking' = 'known';

  /** Whether submissions may fill every slot: false while the size is a guess or being judged. */
  get known(): boolean {
    return this.#phase === 'known';
  }

  /** The learnt size is being judged: nothing more is submitted until it is. */
  get judging(): boolean {
    return this.#phase === 'checking';
  }

  /** The guessed size did not fit: one job at a time from now on. */
  guess(): void {
    this.#phase = 'guessing';
  }

  /** A file was saved: true when the run was guessing and the learnt size is to be judged now (once). */
  beginCheck(): boolean {
    if (this.#phase !== 'guessing') return false;
    this.#phase = 'checking';
    return true;
  }

  /** The learnt size was judged: the full slot limit applies (a short one stops the run instead). */
  learnt(): void {
    this.#phase = 'known';
  }

  /** The check could not tell: still one job at a time, judged again at the next saved file. */
  stillGuessed(): void {
    if (this.#phase === 'checking') this.#phase = 'guessing';
  }
}
