/**
 * Runs steps one after another, in the order they were called, whatever each one awaits: a
 * read called after a write sees it, and a step's BEGIN and COMMIT never have another step's
 * statements between them. A step that fails does not stop the ones after it.
 */
export class StepQueue {
  #tail: Promise<unknown> = Promise.resolve();
  #calls = 0;

  /** Steps queued so far: whether any was queued after a given one (write-groups.ts). */
  get calls(): number {
    return this.#calls;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    this.#calls += 1;
    const done = this.#tail.then(work);
    this.#tail = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }
}
