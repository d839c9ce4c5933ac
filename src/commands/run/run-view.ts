import type { Notice, Warn } from '../../batch/resolve/warnings.js';
import type { RunObserver } from '../../runner/run-observer.js';
import type { StopReason } from '../../runner/stop-rules.js';
import type { CheckedService, RunOutcome } from './run-outcome.js';

/**
 * How a run shows itself: `run` (run.ts) emits each call as its handle's event, once, and every view
 * of the run (the CLI's, a program's) reads those events.
 */
export interface RunView {
  sandboxStarted(baseUrl: string, ledgerShown: string, outputDir: string): void;
  /** A line about what this run will do that a person should read before it spends (retry, pays again). */
  notice(notice: Notice): void;
  /** A warning or a pre-flight word. */
  warn: Warn;
  /** Where the --on-complete command's own output goes. */
  hookOutput: NodeJS.WritableStream;
  /**
   * The plan line is known: the view starts and returns where the runner reports. `checked` is what
   * the pre-flight found at `service`, for the view's first line.
   */
  start(planLine: string, checked: CheckedService): RunObserver;
  /** A new reason to stop took effect (budget, refused account, a drain...). */
  stopped(reason: StopReason, message: string): void;
  /** Called on a request to stop (an abort): the pre-flight gives up, or the run drains. */
  onInterrupt(listener: () => void): void;
  /** The run ended: its outcome, before the notifications are awaited. */
  ended(outcome: RunOutcome): void;
}
