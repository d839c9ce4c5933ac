import type { MediaGenClient } from '../../api/client.js';
import type { Account } from '../../api/schemas.js';
import { ExitCode } from '../../errors.js';
import { stopOnJobsUnknownToLedger } from '../../import/known-jobs-check.js';
import type { Ledger } from '../../ledger/ledger.js';
import { budgetLeftMicros } from '../../ledger/money-totals.js';
import type { Manifest } from '../../manifest/index.js';
import { buildPlan } from '../../report/plan-report.js';
import { buildStatus } from '../../report/status-report.js';
import { systemClock } from '../../runner/clock.js';
import { runBatch } from '../../runner/run-loop.js';
import type { StopReason } from '../../runner/stop-rules.js';
import type { SandboxHandle } from '../../sandbox/index.js';
import type { ListrRunView } from '../../ui/listr-view.js';
import { checkTitle } from '../../ui/run-view.js';
import { formatRunSummary } from '../../ui/summary.js';
import { type Connection, forSandbox, ledgerPathFor, manifestOrExit } from '../common.js';
import type { CliIo, Command } from '../io.js';
import { ledgerWriteFailure, lockLedger, openRunLedger, sandboxStatePath } from '../ledger-access.js';
import { planSource, statusSource } from '../ledger-read.js';
import { filesUnder } from '../output-files.js';
import { claimOutputFolder, refuseOthersOutputFolder } from '../output-folder.js';
import type { CommandArgs } from '../parse-args.js';
import type { PreflightResult } from '../preflight.js';
import { retryFailedNotice } from '../retry-failed.js';
import { RunNotices, readNoticeSettings } from '../run-notices.js';
import { runProgress } from '../run-progress.js';
import { type RunSettings, readRunSettings } from '../run-settings.js';
import { checkOutputFolder } from '../save-check.js';
import { serviceIdentity } from '../service.js';
import { checkAccount, clientFor } from '../service-check.js';
import { startEmbeddedSandbox } from './embedded-sandbox.js';
import { statusJson } from './status.js';

/** What a run holds open; the command's `finally` closes whatever of it was opened. */
interface Held {
  ledger: Ledger | null;
  sandbox: SandboxHandle | null;
  live: ListrRunView | null;
  interrupted: boolean;
}

export const runCommand: Command<'run'> = async (args, io) => {
  const { values } = args;
  // A sandbox run saves its placeholder videos apart from real results (docs/services.md).
  const manifest = forSandbox(manifestOrExit(args.positionals[0], io), values.sandbox);
  const settings = readRunSettings(args, manifest, io);
  const notices = readNoticeSettings(args, manifest, io);
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  const lock = lockLedger(ledgerPath);
  if (!lock) {
    io.stderr.write(
      `mediabatch run: the ledger ${ledgerPath} is held by another live run; nothing was changed\n`,
    );
    return ExitCode.Refused;
  }
  const held: Held = { ledger: null, sandbox: null, live: null, interrupted: false };
  try {
    const ledger = openRunLedger(ledgerPath, manifest, {
      redo: settings.runner.redo ?? [],
      identity: settings.identity,
      cwd: io.cwd,
    });
    held.ledger = ledger;
    // Before any request: another batch's output folder is refused (docs/manifest.md).
    const folder = { manifest, ledgerPath, service: settings.identity, cwd: io.cwd };
    refuseOthersOutputFolder(folder);
    // Saving comes before spending: a folder that cannot take the files stops the run here.
    await checkOutputFolder(manifest, ledger, settings.runner);
    const connection = settings.connection ?? (await startRunSandbox(held, ledgerPath, manifest, args, io));
    const client = clientBindingLedger(connection, settings, ledger);
    const release = () => lock.release();
    const checked = await checkService(client, connection, settings, ledger, release, io);
    if (checked.kind === 'interrupted') {
      io.stderr.write('mediabatch run: interrupted before anything was submitted\n');
      return ExitCode.Interrupted;
    }
    // A new ledger while the service holds this manifest's jobs: a lost ledger (docs/import.md).
    await stopOnJobsUnknownToLedger(connection, ledger, {
      manifestName: manifest.name,
      manifestArg: args.positionals[0]!,
      ledgerPath,
      ledgerFlag: values.ledger,
      baseUrlFlag: values['base-url'],
      sandboxState: held.sandbox ? sandboxStatePath(ledgerPath) : undefined,
    });
    // A free folder becomes this ledger's once the service answered, before anything is paid.
    const unclaimed = claimOutputFolder(folder);
    if (unclaimed !== null) io.stderr.write(`mediabatch run: warning: ${unclaimed}\n`);
    // The pre-flight's answer is the account the runner starts from: no second read.
    const account = checked.kind === 'answered' ? checked.account : null;
    const exitCode = await runAndSummarise(
      {
        client,
        ledger,
        manifest,
        settings: withAccount(settings, account),
        ledgerPath,
        args,
        held,
        notices: new RunNotices(notices, { manifest, ledgerPath, ledger }, io),
        checked: checkedWords(connection, checked),
      },
      io,
    );
    held.interrupted = exitCode === ExitCode.Interrupted;
    return exitCode;
  } finally {
    // An error ends the view too, so that the terminal is left clean under the message.
    await held.live?.finish(null);
    held.ledger?.close();
    lock.release();
    await held.sandbox?.close();
    // A drain through an outage leaves resends waiting in the background: the ledger is closed and
    // consistent, so the process ends now instead of after their timers.
    if (held.interrupted) io.exit(ExitCode.Interrupted);
  }
};

/** --sandbox: its state lives beside the ledger, so a killed run resumes against the jobs it left. */
async function startRunSandbox(
  held: Held,
  ledgerPath: string,
  manifest: Manifest,
  args: CommandArgs<'run'>,
  io: CliIo,
): Promise<Connection> {
  const sandbox = await startEmbeddedSandbox(ledgerPath);
  held.sandbox = sandbox;
  if (!args.values.json)
    io.stdout.write(
      `Running against the embedded sandbox at ${sandbox.baseUrl}: placeholder videos, no real spend.\n` +
        `  ledger ${ledgerPath}, files in ${manifest.outputDir}\n`,
    );
  return { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey };
}

/**
 * The ledger is bound to the service once it has answered (pre-flight, or later if it was slow),
 * so a mistyped address that never answered leaves the ledger free.
 */
function clientBindingLedger(connection: Connection, settings: RunSettings, ledger: Ledger): MediaGenClient {
  let bound = ledger.service() !== null;
  return clientFor(connection, settings, () => {
    if (!bound) ledger.bindService(settings.identity);
    bound = true;
  });
}

const withAccount = (settings: RunSettings, account: Account | null): RunSettings => ({
  ...settings,
  runner: { ...settings.runner, account },
});

/**
 * Pre-flight: whether the service answers, and the account it gave. Ctrl-C while checking stops the check; after it,
 * the first asks the run to drain and a second ends the process at once.
 */
async function checkService(
  client: MediaGenClient,
  connection: Connection,
  settings: RunSettings,
  ledger: Ledger,
  releaseLock: () => void,
  io: CliIo,
): Promise<PreflightResult> {
  let checking = true;
  const stopChecking = new AbortController();
  io.onInterrupt((count) => {
    if (checking) stopChecking.abort();
    if (checking || count < 2) return;
    // Every ledger write is one synchronous transaction, so the ledger is consistent right now.
    ledger.close();
    releaseLock();
    io.exit(ExitCode.Interrupted);
  });
  const checked = await checkAccount(
    client,
    connection,
    settings,
    (line) => io.stderr.write(`mediabatch run: ${line}\n`),
    stopChecking.signal,
  );
  checking = false;
  return checked;
}

interface RunParts {
  client: MediaGenClient;
  ledger: Ledger;
  manifest: Manifest;
  settings: RunSettings;
  ledgerPath: string;
  args: CommandArgs<'run'>;
  held: Held;
  notices: RunNotices;
  /** The live view's first line: what the pre-flight found. */
  checked: string;
}

function checkedWords(
  connection: Connection,
  checked: Exclude<PreflightResult, { kind: 'interrupted' }>,
): string {
  const identity = serviceIdentity(connection.baseUrl);
  if (checked.kind !== 'answered') return checkTitle(identity, checked);
  const { balance, concurrency } = checked.account;
  return checkTitle(identity, {
    kind: 'answered',
    balanceUsd: balance.amount_usd,
    active: concurrency.active,
    limit: concurrency.limit,
  });
}

/** Says what the run is about to do, runs the batch, and prints its summary; returns the exit code. */
async function runAndSummarise(parts: RunParts, io: CliIo): Promise<ExitCode> {
  const { client, ledger, manifest, settings, ledgerPath, held, notices } = parts;
  const { values } = parts.args;
  const only = settings.runner.only ?? null;
  const runId = ledger.startRun(process.pid);
  if (values['retry-failed']) {
    const selected = only ? manifest.items.filter((item) => only.has(item.id)) : manifest.items;
    const left = budgetLeftMicros(manifest.budgetMicros, ledger.moneyTotals());
    const notice = retryFailedNotice(selected, ledger.listItems(), ledger.listAttempts(), left);
    (values.json ? io.stderr : io.stdout).write(
      notice ?? '--retry-failed: no item failed for a final reason\n',
    );
  }
  // The same words as `plan`, before anything is spent, so a surprise can still be stopped.
  const plan = planOfRun(manifest, ledger, settings);
  if (plan.pays_again) (values.json ? io.stderr : io.stdout).write(`${plan.pays_again}\n`);
  const summary = plan.summary;
  if (!values.json) io.stdout.write(`${summary}\n`);
  const progress = runProgress(
    {
      json: values.json,
      ndjson: values.progress === 'ndjson',
      title: `${manifest.name} (${manifest.items.length} items)`,
      planLine: summary,
      checked: parts.checked,
    },
    io,
  );
  held.live = progress.live;
  const result = await runBatch(
    {
      client,
      ledger,
      manifest,
      clock: systemClock,
      random: Math.random,
      reporter: notices.reporter(progress.reporter),
      onStop: notices.stopped,
    },
    settings.runner,
    (drain) => io.onInterrupt((count) => count === 1 && drain()),
  ).catch((error: unknown) => {
    throw ledgerWriteFailure(ledgerPath, error);
  });
  await held.live?.finish(result.stop);
  held.live = null;

  const report = buildStatus(manifest, statusSource(ledger), Date.now());
  const exitCode = runExitCode(
    result.stop,
    report.items.filter((item) => only?.has(item.id) ?? true),
  );
  ledger.endRun(runId, exitCode);
  progress.ndjson?.finished(exitCode);
  if (values.json) io.stdout.write(statusJson(report, ledger.service()?.identity ?? null));
  else io.stdout.write(formatRunSummary(report, result.stop, ledgerPath, only));
  await notices.finished(report, result.stop, exitCode);
  return exitCode;
}

/** `plan` for this run: the ledger's prices and what it would submit with the run's own flags. */
function planOfRun(manifest: Manifest, ledger: Ledger, settings: RunSettings) {
  const outputFiles = filesUnder(manifest.outputDir, manifest.file);
  const { runner } = settings;
  return buildPlan(manifest, planSource(ledger), null, Date.now(), {
    regenerateExpired: runner.regenerateExpired,
    outputFiles,
    retryFailed: runner.retryFailed ?? false,
    redo: runner.redo ?? [],
    only: runner.only ?? null,
  });
}

/** The exit code of a run, from why it stopped and the state of the items it was asked to run. */
function runExitCode(stop: StopReason | null, items: ReadonlyArray<{ state: string }>): ExitCode {
  if (stop?.kind === 'account_refused' || stop?.kind === 'ledger_disagrees' || stop?.kind === 'disk_refuses')
    return ExitCode.Refused;
  const settled = items.every((item) => item.state !== 'pending' && item.state !== 'in_flight');
  if (stop?.kind === 'draining' && !settled) return ExitCode.Interrupted;
  return items.every((item) => item.state === 'done') ? ExitCode.Ok : ExitCode.ItemsNotDone;
}
