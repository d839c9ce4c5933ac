import type { DownloadTask } from './download-queue.js';
import type { TakeCheck } from './output-check.js';
import type { RunContext } from './run-context.js';

/**
 * A take saved but not the video its request asked for (docs/checks.md): it stays on disk, paid
 * for, with its check in the ledger, and its item ends `checks_failed` (recorded with the files
 * by DownloadQueue). A take made before its item was edited fails alone: its item goes its way.
 */
export function takeFailedCheck(run: RunContext, task: DownloadTask, check: TakeCheck): void {
  const { itemId, take } = task.attempt;
  run.deps.observer.log(
    'error',
    `${itemId}: take ${take ?? 1} failed its check: ${check.reason}; it is kept`,
  );
  if (!task.superseded)
    run.setItem(
      itemId,
      'checks_failed',
      { errorCode: 'checks_failed', errorMessage: check.reason },
      { recorded: true },
    );
  run.wake();
}

/** The takes of one run left unchecked (not a container mediabatch reads): said once, at its end. */
export class CheckTally {
  #unchecked = 0;

  counted(check: TakeCheck): TakeCheck {
    if (check.outcome === 'unchecked') this.#unchecked += 1;
    return check;
  }

  get unchecked(): number {
    return this.#unchecked;
  }
}
