/**
 * Preloaded into a spawned CLI (`NODE_OPTIONS=--import=<this file>`) by tests that move time on:
 * the CLI's `Date` runs `MEDIABATCH_TEST_CLOCK_OFFSET_MS` ahead of the wall clock, the same offset
 * the test gives its sandbox (`startSandbox(..., { now })`). Client and service then agree on what
 * time it is after "two days pass", as they would two days later, and no test has to wait them out.
 * Timers, `performance.now()` and file times are untouched; only what `Date` says moves.
 */
const offset = Number(process.env.MEDIABATCH_TEST_CLOCK_OFFSET_MS ?? '0');

if (Number.isFinite(offset) && offset !== 0) {
  const WallDate = globalThis.Date;
  class ShiftedDate extends WallDate {
    constructor(...args) {
      if (args.length === 0) super(WallDate.now() + offset);
      else super(...args);
    }
    static now() {
      return WallDate.now() + offset;
    }
  }
  globalThis.Date = ShiftedDate;
}
