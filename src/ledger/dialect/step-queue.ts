/**
 * Runs steps one after another, in the order they were called, whatever each one awaits: a
 * read called after a write sees it, and a step's BEGIN and COMMIT never have another step's
 * statements between them. A step that fails does not stop the ones after it.
 */
export class StepQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const done = this.#tail.then(work);
    this.#tail = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }
}
