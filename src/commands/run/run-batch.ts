import {
  redefinedNotice,
  type SettledDefinition,
  settleDefinition,
} from '../../batch/definition/batch-definition.js';
import { holdLedger, ledgerWriteFailure, openRunLedger } from '../../batch/ledger/ledger-access.js';
import { newBatchTrace } from '../../batch/output/leave-no-trace.js';
import { openStoreOrRefuse } from '../../batch/output/open-output-store.js';
import {
  claimOutputFolder,
  folderContextOf,
  refuseOthersOutputFolder,
} from '../../batch/output/output-owner-check.js';
import { checkOutputFolder } from '../../batch/output/save-check.js';
import { approvedCeiling, planOfRun, withinCeiling } from '../../batch/plan/approved-plan-check.js';
import { sandboxStatePath } from '../../batch/resolve/placement.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { RunSettings } from '../../batch/run-settings/run-settings.js';
import { startEmbeddedSandbox } from '../../batch/service/embedded-sandbox.js';
import { stopOnJobsUnknownToLedger } from '../../batch/service/known-jobs-check.js';
import { type PreflightResult, refusedBeforeAnything } from '../../batch/service/preflight.js';
import { type Connection, checkAccount, clientFor } from '../../batch/service/service-check.js';
import { UserError } from '../../errors.js';
import { exitCodeOfOutcome } from '../../exit-codes.js';
import {
  budgetLeftMicros,
  type LedgerLifecycle,
  type ReadingLedger,
  type RecordReads,
  type RunLedger,
  type SharedLedger,
  type TakeLedger,
} from '../../ledger/index.js';
import { systemClock } from '../../runner/clock.js';
import { runBatch } from '../../runner/run-loop.js';
import type { SizeGuess } from '../../runner/save-estimate.js';
import { formatDuration } from '../../runner/stop-rules.js';
import type { SandboxHandle } from '../../sandbox/index.js';
import type { MediaGenClient } from '../../service-client/client.js';
import type { Account } from '../../service-client/schemas.js';
import type { OutputStore } from '../../storage/output-store.js';
import { galleryAtEnd } from './gallery-at-end.js';
import { refundMissingWarning, uncheckedWarning } from './refund-warning.js';
import { retryFailedNotice } from './retry-failed.js';
import { type NoticeSettings, RunNotices } from './run-notices.js';
import { type CheckedService, checkedService, outcomeOf, type RunOutcome } from './run-outcome.js';
import type { RunView } from './run-view.js';
import { warnUnsharedOutput } from './shared-output-check.js';

/** One run as asked: the batch, what was chosen for this run, and whom to tell. */
export interface RunRequest {
  batch: Batch;
  settings: RunSettings;
  notices: NoticeSettings;
  /** Write or refresh the batch's gallery when the run ends (gallery-at-end.ts). */
  gallery: boolean;
  /** Make the manifest its shared batch's next definition where it differs (batch-definition.ts). */
  redefine?: boolean;
  /** An approved plan's file (absolute): run only that plan, within its total (approved-plan.ts). */
  approvedPlan?: string | null;
  /** The spend ceiling the approved plan sets, once checked. */
  ceilingMicros?: number | null;
}

export type { CheckedService, RunOutcome, RunView };

/** The ledger's roles a run uses: every one but copying records in (copy-ledger's and import's). */
type RunHeldLedger = LedgerLifecycle & RunLedger & RecordReads & ReadingLedger & TakeLedger & SharedLedger;

/** What a run holds open; the `finally` closes whatever of it was opened. */
interface Held {
  ledger: RunHeldLedger | null;
  sandbox: SandboxHandle | null;
}

/**
 * A run, everything the CLI's `run` decides: the lock, the ledger and its service, the output folder,
 * the embedded sandbox, the pre-flight, the lost-ledger check, the batch and its exit code.
 */
export async function runManifest(request: RunRequest, view: RunView): Promise<RunOutcome> {
  const { batch } = request;
  const trace = newBatchTrace(batch.ledger, batch.manifest.outputDir);
  const lock = holdLedger(batch.ledger, 'changed');
  const held: Held = { ledger: null, sandbox: null };
  const ran = await runHeld(request, view, held).then(
    (outcome) => ({ outcome, error: null }),
    async (error: unknown) => ({ outcome: null, error: await failureOf(batch.ledgerShown, error, held) }),
  );
  const closing = await closeLedger(held.ledger);
  lock.release();
  await held.sandbox?.close();
  // A refusal before anything was recorded leaves no new ledger behind.
  if (ran.error?.leaveNoTrace) trace.remove();
  if (ran.error) throw ran.error.thrown;
  // The last commit failing is the run's failure; after another one, it says nothing new.
  if (closing !== null) throw ledgerWriteFailure(batch.ledgerShown, closing);
  return ran.outcome;
}

/** What a failed run throws, and whether it leaves no trace (nothing was recorded). */
async function failureOf(
  ledgerShown: string,
  error: unknown,
  held: Held,
): Promise<{ thrown: unknown; leaveNoTrace: boolean }> {
  // A ledger that failed (a lost database) is not asked again; close does not wait for it either.
  const failure = ledgerWriteFailure(ledgerShown, error);
  if (failure instanceof UserError && failure.code === 'ledger_write_failed')
    return { thrown: failure, leaveNoTrace: false };
  const leaveNoTrace = error instanceof UserError && !((await held.ledger?.hasAttempts()) ?? false);
  return { thrown: error, leaveNoTrace };
}

/** Closes the ledger; what failed to commit on the way is given back, not thrown. */
async function closeLedger(ledger: LedgerLifecycle | null): Promise<unknown> {
  try {
    await ledger?.close();
    return null;
  } catch (error) {
    return error;
  }
}

/** Everything of a run between taking its lock and closing what it opened (`held`). */
async function runHeld(request: RunRequest, view: RunView, held: Held): Promise<RunOutcome> {
  const { settings, batch } = request;
  const { manifest, ledgerShown } = batch;
  // Before any request: the approved plan is still the plan, or nothing is sent.
  const ceilingMicros = request.approvedPlan
    ? await approvedCeiling(batch, request.approvedPlan, settings.runner)
    : null;
  const ledger = await openRunLedger(batch.ledger, manifest, {
    redo: settings.runner.redo ?? [],
    identity: settings.identity,
    cwd: batch.cwd,
    leaseMs: batch.settings.leaseMs,
    reconnectWithinMs: batch.settings.reconnectWithinMs,
    onWaiting: (waitMs) =>
      view.warn({
        code: 'ledger_waiting',
        message: `the ledger's database ${batch.ledger.shown} stopped answering: waiting up to ${formatDuration(waitMs)} for it, then the run stops (no item fails)`,
        fields: { waitSeconds: Math.round(waitMs / 1000) },
      }),
  });
  held.ledger = ledger;
  // Before any request: a shared batch runs one definition (docs/shared-ledger.md).
  const definition = await settleDefinition(ledger, manifest, request.redefine ?? false);
  const redefined = redefinedNotice(definition, manifest.name);
  if (redefined) view.notice(redefined);
  // Before any request: another batch's output folder is refused (docs/manifest.md).
  const folder = folderContextOf(batch, settings.identity);
  const store = await openStoreOrRefuse(batch);
  await refuseOthersOutputFolder(folder, store);
  // Saving comes before spending: a folder that cannot take the files stops the run here.
  const sizeGuess = await checkOutputFolder(manifest, ledger, settings.runner, store);
  const connection = settings.connection ?? (await startRunSandbox(held, request, view));
  const client = await clientBindingLedger(connection, settings, ledger);
  const checked = await checkService(client, connection, settings, view);
  if (checked.kind === 'interrupted') {
    // Drained before its first POST: the same stop, said the same way, as a drain later on.
    const stop = { kind: 'draining' } as const;
    view.stopped(stop, 'stopping: nothing was submitted');
    return await outcomeOf(request, ledger, stop, 'interrupted', false);
  }
  // Nothing recorded and nothing can be: the run ends before it claims or writes anything.
  if (checked.kind === 'refused' && !(await ledger.hasAttempts())) throw refusedBeforeAnything(checked.error);
  // A new ledger while the service holds this manifest's jobs: a lost ledger (docs/import.md).
  await stopOnJobsUnknownToLedger(connection, ledger, {
    manifestName: manifest.name,
    manifestArg: batch.named.manifest,
    ledgerPath: ledgerShown,
    ledgerFlag: batch.named.ledger,
    baseUrlFlag: batch.named.baseUrl,
    sandboxState: held.sandbox ? sandboxStatePath(ledgerShown) : undefined,
  });
  // A free folder becomes this ledger's once the service answered, before anything is paid.
  const unclaimed = await claimOutputFolder(folder, store);
  if (unclaimed !== null) view.warn({ code: 'output_unclaimed', message: unclaimed });
  await warnUnsharedOutput(ledger, manifest, view.warn);
  // The pre-flight's answer is the account the runner starts from: no second read.
  const account = checked.kind === 'answered' ? checked.account : null;
  const parts = {
    client,
    ledger,
    request: { ...request, settings: withAccount(settings, account, sizeGuess, definition), ceilingMicros },
    store,
    checked: checkedService(connection, checked),
  };
  return await runAndReport(parts, view);
}

/** The embedded sandbox keeps its state beside the ledger, so a killed run resumes against its jobs. */
async function startRunSandbox(held: Held, request: RunRequest, view: RunView): Promise<Connection> {
  const { ledgerShown, sandboxConfig } = request.batch;
  const sandbox = await startEmbeddedSandbox(ledgerShown, view.warn, sandboxConfig);
  held.sandbox = sandbox;
  view.sandboxStarted(sandbox.baseUrl, request.batch.ledgerShown, request.batch.manifest.outputDir);
  return { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey };
}

/**
 * The ledger is bound to the service once it has answered (pre-flight, or later if it was slow),
 * so a mistyped address that never answered leaves the ledger free.
 */
async function clientBindingLedger(
  connection: Connection,
  settings: RunSettings,
  ledger: LedgerLifecycle,
): Promise<MediaGenClient> {
  let bound = (await ledger.service()) !== null;
  return clientFor(connection, settings, () => {
    // Not awaited: the ledger runs its steps in call order, and a failed write fails the next step too.
    if (!bound) ledger.bindService(settings.identity).catch(() => undefined);
    bound = true;
  });
}

/**
 * The runner starts from what the checks before it found: the account, a guessed size too large,
 * and the revision of its shared batch's definition.
 */
const withAccount = (
  settings: RunSettings,
  account: Account | null,
  sizeGuess: SizeGuess | null,
  definition: SettledDefinition | null,
): RunSettings => ({
  ...settings,
  runner: { ...settings.runner, account, sizeGuess, definition },
});

/**
 * Pre-flight: whether the service answers, and the account it gave. A stop while checking ends the
 * check; after it, a stop drains the run (runAndReport).
 */
async function checkService(
  client: MediaGenClient,
  connection: Connection,
  settings: RunSettings,
  view: RunView,
): Promise<PreflightResult> {
  let checking = true;
  const stopChecking = new AbortController();
  view.onInterrupt(() => {
    if (checking) stopChecking.abort();
  });
  const checked = await checkAccount(client, connection, settings, view.warn, stopChecking.signal);
  checking = false;
  return checked;
}

interface RunParts {
  client: MediaGenClient;
  ledger: RunHeldLedger;
  request: RunRequest;
  store: OutputStore;
  checked: CheckedService;
}

/** Says what the run is about to do, runs the batch, and reports how it ended. */
async function runAndReport(parts: RunParts, view: RunView): Promise<RunOutcome> {
  const { client, ledger, request } = parts;
  const { settings } = request;
  const { manifest, ledgerShown } = request.batch;
  const only = settings.runner.only ?? null;
  const runId = await ledger.startRun(process.pid);
  if (settings.runner.retryFailed) {
    const selected = only ? manifest.items.filter((item) => only.has(item.id)) : manifest.items;
    const left = budgetLeftMicros(manifest.budgetMicros, await ledger.moneyTotals());
    const notice = retryFailedNotice(selected, await ledger.listItems(), await ledger.listAttempts(), left);
    view.notice(
      notice ?? { code: 'retry_failed_none', message: '`retryFailed`: no item failed for a final reason\n' },
    );
  }
  // The same words as `plan`, before anything is spent, so a surprise can still be stopped.
  const plan = await planOfRun(manifest, ledger, settings);
  if (plan.pays_again) view.notice({ code: 'pays_again', message: `${plan.pays_again}\n` });
  const observer = view.start(plan.summary, parts.checked);
  const notices = new RunNotices(
    request.notices,
    { manifest, ledgerPath: ledgerShown, ledger },
    { warn: view.warn, hookOutput: view.hookOutput },
  );
  const result = await runBatch(
    {
      client,
      ledger,
      manifest: withinCeiling(manifest, request.ceilingMicros ?? null),
      clock: systemClock,
      random: Math.random,
      observer: notices.observer(observer),
      store: parts.store,
      onStop: (reason, message) => {
        notices.stopped(reason, message);
        view.stopped(reason, message);
      },
    },
    settings.runner,
    (drain) => view.onInterrupt(drain),
  ).catch((error: unknown) => {
    throw ledgerWriteFailure(ledgerShown, error);
  });
  const outcome = {
    ...(await outcomeOf(request, ledger, result.stop, null, true)),
    heldBack: result.heldBack,
  };
  // The ledger's row of the run records the exit code the CLI ends with for it (docs/glossary.md).
  await ledger.endRun(runId, exitCodeOfOutcome(outcome.outcome));
  if (request.gallery) Object.assign(outcome, await galleryAtEnd(request.batch, ledger, outcome, view.warn));
  const unrefunded = refundMissingWarning(await ledger.unrefundedFailures());
  if (unrefunded) view.warn(unrefunded);
  if (result.uncheckedTakes > 0) view.warn(uncheckedWarning(result.uncheckedTakes));
  view.ended(outcome);
  await notices.finished(outcome.report, result.stop, outcome.outcome);
  return outcome;
}
