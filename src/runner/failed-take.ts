import type { DownloadTask } from './download-queue.js';
import type { TakeCheck } from './output-check.js';
import { mayReroll, rerollWords } from './reroll.js';
import type { RunContext } from './run-context.js';

/**
 * A take saved but not the video its request asked for (docs/checks.md): it stays on disk, paid
 * for, with its check in the ledger, and its item is `checks_failed` (recorded with the files by
 * DownloadQueue). While the item has re-rolls left, it is queued again for a new take under a new
 * key (reroll.ts), behind the items waiting for their first; a re-roll that does not fit the budget
 * leaves it `checks_failed` (submit.ts). A take made before its item was edited fails alone.
 */
export function takeFailedCheck(run: RunContext, task: DownloadTask, check: TakeCheck): void {
  const { itemId, take } = task.attempt;
  const failed = run.checks.failedTakes(itemId);
  const rerolls = run.state.item(itemId)?.item.rerolls ?? 0;
  const again = !task.superseded && run.state.stop === null && mayReroll(failed, rerolls);
  const next = again ? `; buying it again (${rerollWords(failed, rerolls)})` : '';
  run.deps.observer.log(
    again ? 'warn' : 'error',
    `${itemId}: take ${take ?? 1} failed its check: ${check.reason}; it is kept${next}`,
  );
  if (!task.superseded)
    run.setItem(
      itemId,
      'checks_failed',
      { errorCode: 'checks_failed', errorMessage: check.reason },
      { recorded: true },
    );
  if (again) {
    run.state.redo(itemId);
    run.enqueue(itemId);
  }
  run.wake();
}
