import type { SavedFile } from '../downloads/save-job-files.js';
import type { AttemptRecord } from '../ledger/index.js';
import { checkTakeFully } from './check-saved.js';
import { type TakeCheck, videoCheckTolerance } from './output-check.js';
import { CheckCannotRun, type OwnChecks, unrunnableCheck } from './own-checks.js';
import type { RunContext } from './run-context.js';

/**
 * A run's checks of its saved takes (docs/checks.md): the built-in one and the checks of your own.
 * A check of your own that cannot give a verdict stops the run before anything more is bought: the
 * take it was given stays saved and `unchecked` (its item done, as its built-in check allowed), and
 * `mediabatch check` checks it once the check is fixed.
 */

const NONE: OwnChecks = { checks: [], cwd: '.', env: {} };

/** Before anything is sent: a check whose program is not there stops the run at once. */
export async function checkProgramsFirst(run: RunContext): Promise<void> {
  const unrunnable = await unrunnableCheck(run.options.ownChecks ?? NONE);
  if (unrunnable) checkCannotRun(run, unrunnable);
}

export async function checkTakeInRun(
  run: RunContext,
  attempt: AttemptRecord,
  files: readonly SavedFile[],
): Promise<TakeCheck | null> {
  const tolerance = videoCheckTolerance(run.deps.manifest);
  const stopped = run.state.stop?.kind === 'check_unusable' ? run.state.stop : null;
  const own = stopped ? NONE : (run.options.ownChecks ?? NONE);
  try {
    const check = await checkTakeFully(run.deps.store, attempt, files, tolerance, own);
    if (check === null) return null;
    // A check that could not run is not tried again in this run: its takes wait for `mediabatch check`.
    if (stopped && check.outcome !== 'failed')
      return { ...check, outcome: 'unchecked', reason: stopped.message };
    return run.checks.counted(attempt.itemId, check);
  } catch (error) {
    if (!(error instanceof CheckCannotRun)) throw error;
    checkCannotRun(run, error);
    // Not counted with the takes whose container could not be read: the run's stop says this.
    return { outcome: 'unchecked', reason: error.message, video: null };
  }
}

function checkCannotRun(run: RunContext, error: CheckCannotRun): void {
  run.stopWith(
    { kind: 'check_unusable', check: error.check, message: error.message },
    `stopping: ${error.message}. Nothing more is submitted; jobs in flight are saved. Fix the check, then ` +
      '`mediabatch check` checks what was saved meanwhile',
  );
}
