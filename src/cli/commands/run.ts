import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MediaGenClient } from '../../api/client.js';
import { ExitCode, UserError } from '../../errors.js';
import { stopOnJobsUnknownToLedger } from '../../import/known-jobs-check.js';
import { Ledger } from '../../ledger/ledger.js';
import { acquireLedgerLock } from '../../ledger/lock.js';
import type { Manifest } from '../../manifest/index.js';
import { buildPlan } from '../../report/plan-report.js';
import { buildStatus } from '../../report/status-report.js';
import { systemClock } from '../../runner/clock.js';
import type { StopReason } from '../../runner/policy.js';
import type { RunReporter } from '../../runner/reporter.js';
import { silentReporter } from '../../runner/reporter.js';
import { runBatch } from '../../runner/run-loop.js';
import { demoSandboxConfig, type SandboxHandle, startSandbox } from '../../sandbox/index.js';
import { bothReporters, NdjsonReporter } from '../../ui/ndjson-reporter.js';
import { PlainReporter } from '../../ui/plain-reporter.js';
import { formatRunSummary } from '../../ui/summary.js';
import { TtyReporter } from '../../ui/tty-reporter.js';
import {
  connectionFromEnv,
  forSandbox,
  ledgerPathFor,
  manifestOrExit,
  parsePositiveSeconds,
} from '../common.js';
import type { CliIo, Command } from '../io.js';
import { selectItems } from '../item-selection.js';
import { planSource, statusSource } from '../ledger-read.js';
import { filesUnder } from '../output-files.js';
import { DEFAULT_PREFLIGHT_SECONDS, preflight } from '../preflight.js';
import { readRedoIds, redoProblem } from '../redo-list.js';
import { retryFailedNotice } from '../retry-failed.js';
import { ensureSameService, SANDBOX_IDENTITY, serviceIdentity } from '../service.js';
import { statusJson } from './status.js';

export const runCommand: Command<'run'> = async ({ values, positionals }, io) => {
  // A sandbox run saves its placeholder videos apart from real results (docs/services.md).
  const manifest = forSandbox(manifestOrExit(positionals[0], io), values.sandbox);
  const redo = readRedoIds(values.redo, io.cwd);
  const pollSeconds = parsePositiveSeconds(values['poll-interval'], '--poll-interval');
  const timeoutSeconds = parsePositiveSeconds(io.env.MEDIABATCH_HTTP_TIMEOUT, 'MEDIABATCH_HTTP_TIMEOUT');
  const modelBusySeconds = parsePositiveSeconds(
    io.env.MEDIABATCH_MODEL_BUSY_SECONDS,
    'MEDIABATCH_MODEL_BUSY_SECONDS',
  );
  const only = selectItems(manifest, values.only);
  const windowSeconds =
    parsePositiveSeconds(io.env.MEDIABATCH_PREFLIGHT_SECONDS, 'MEDIABATCH_PREFLIGHT_SECONDS') ??
    DEFAULT_PREFLIGHT_SECONDS;
  let connection = values.sandbox ? null : connectionFromEnv(values['base-url'], io);
  if (!values.sandbox && !connection) {
    throw new UserError(
      'no service to run against: pass --base-url URL (or set MEDIAGEN_BASE_URL), or try the manifest offline with --sandbox',
    );
  }
  const identity = connection ? serviceIdentity(connection.baseUrl) : SANDBOX_IDENTITY;

  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  const lock = lockLedger(ledgerPath);
  if (!lock) {
    io.stderr.write(
      `mediabatch run: the ledger ${ledgerPath} is held by another live run; nothing was changed\n`,
    );
    return ExitCode.Refused;
  }
  let sandbox: SandboxHandle | null = null;
  let ledger: Ledger | null = null;
  let live: TtyReporter | null = null;
  let interrupted = false;
  try {
    try {
      ledger = Ledger.open(ledgerPath, manifest.name, manifest.file);
    } catch (error) {
      throw unusableLedger(ledgerPath, error);
    }
    const redoRefused = redo.length === 0 ? null : redoProblem(redo, manifest, ledger.listItems());
    if (redoRefused !== null) throw new UserError(`${redoRefused}; nothing was submitted`);
    ensureSameService(ledger.service()?.identity ?? null, identity, ledgerPath, io.cwd);
    if (values.sandbox) {
      // Its state lives beside the ledger, so a killed run resumes against the jobs it left behind.
      sandbox = await startSandbox(demoSandboxConfig(), { statePath: sandboxStatePath(ledgerPath) });
      connection = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey };
      if (!values.json)
        io.stdout.write(
          `Running against the embedded sandbox at ${sandbox.baseUrl}: placeholder videos, no real spend.\n` +
            `  ledger ${ledgerPath}, files in ${manifest.outputDir}\n`,
        );
    }
    // Bound once the service has answered (pre-flight, or later if it was slow), so a mistyped
    // address that never answered leaves the ledger free.
    const openLedger = ledger;
    let bound = openLedger.service() !== null;
    const client = new MediaGenClient({
      baseUrl: connection!.baseUrl,
      apiKey: connection!.apiKey,
      ...(timeoutSeconds === null ? {} : { timeoutMs: timeoutSeconds * 1000 }),
      onAnswer: () => {
        if (!bound) openLedger.bindService(identity);
        bound = true;
      },
    });

    let checking = true;
    const stopChecking = new AbortController();
    io.onInterrupt((count) => {
      if (checking) stopChecking.abort();
      if (checking || count < 2) return;
      // Every ledger write is one synchronous transaction, so the ledger is consistent right now.
      openLedger.close();
      lock.release();
      io.exit(ExitCode.Interrupted);
    });
    const windowMs = windowSeconds * 1000;
    const checked = await preflight({
      client,
      identity: serviceIdentity(connection!.baseUrl),
      windowMs,
      timeoutMs: Math.min((timeoutSeconds ?? 60) * 1000, Math.max(2000, windowMs / 2)),
      signal: stopChecking.signal,
      sleep: (ms, signal) => systemClock.sleep(ms, signal),
      say: (line) => io.stderr.write(`mediabatch run: ${line}\n`),
    });
    if (checked.kind === 'interrupted') {
      io.stderr.write('mediabatch run: interrupted before anything was submitted\n');
      return ExitCode.Interrupted;
    }
    checking = false;
    // A new ledger while the service holds this manifest's jobs: a lost ledger (docs/import.md).
    await stopOnJobsUnknownToLedger(connection!, ledger, {
      manifestName: manifest.name,
      manifestArg: positionals[0]!,
      ledgerPath,
      ledgerFlag: values.ledger,
      baseUrlFlag: values['base-url'],
      sandboxState: sandbox ? sandboxStatePath(ledgerPath) : undefined,
    });
    const runId = ledger.startRun(process.pid);
    if (values['retry-failed']) {
      const selected = only ? manifest.items.filter((item) => only.has(item.id)) : manifest.items;
      const money = ledger.moneyTotals();
      const left =
        manifest.budgetMicros === null
          ? null
          : manifest.budgetMicros - (money.chargedMicros - money.refundedMicros) - money.reservedMicros;
      const notice = retryFailedNotice(selected, ledger.listItems(), ledger.listAttempts(), left);
      (values.json ? io.stderr : io.stdout).write(
        notice ?? '--retry-failed: no item failed for a final reason\n',
      );
    }

    // The same words as `plan`, before anything is spent, so a surprise can still be stopped.
    const summary = planLine(manifest, ledger, values['regenerate-expired']);
    if (!values.json) io.stdout.write(`${summary}\n`);
    const ndjson = values.progress === 'ndjson' ? new NdjsonReporter(io.stderr) : null;
    ndjson?.plan(summary);
    const screen = screenReporter(
      values.json,
      ndjson !== null,
      io,
      `${manifest.name} (${manifest.items.length} items)`,
    );
    if (screen instanceof TtyReporter) live = screen;
    const reporter = ndjson ? bothReporters(screen, ndjson) : screen;
    const result = await runBatch(
      { client, ledger, manifest, clock: systemClock, random: Math.random, reporter },
      {
        pollIntervalMs: pollSeconds === null ? null : pollSeconds * 1000,
        regenerateExpired: values['regenerate-expired'],
        downloadConcurrency: 4,
        defaultSlotLimit: 3,
        redo,
        ...(timeoutSeconds === null ? {} : { downloadTimeoutMs: timeoutSeconds * 1000 }),
        ...(modelBusySeconds === null ? {} : { modelBusyDelayMs: modelBusySeconds * 1000 }),
        only,
        retryFailed: values['retry-failed'],
      },
      (drain) => io.onInterrupt((count) => count === 1 && drain()),
    ).catch((error: unknown) => {
      throw ledgerWriteFailure(ledgerPath, error);
    });
    live?.stop();
    live = null;

    const report = buildStatus(manifest, statusSource(ledger), Date.now());
    const exitCode = runExitCode(
      result.stop,
      report.items.filter((item) => only?.has(item.id) ?? true),
    );
    ledger.endRun(runId, exitCode);
    ndjson?.finished(exitCode);
    if (values.json) io.stdout.write(statusJson(report, ledger.service()?.identity ?? null));
    else io.stdout.write(formatRunSummary(report, result.stop, ledgerPath, only));
    interrupted = exitCode === ExitCode.Interrupted;
    return exitCode;
  } finally {
    live?.stop();
    ledger?.close();
    lock.release();
    await sandbox?.close();
    // A drain through an outage leaves resends waiting in the background: the ledger is closed and
    // consistent, so the process ends now instead of after their timers.
    if (interrupted) io.exit(ExitCode.Interrupted);
  }
};

/**
 * What shows the run: the live view in a terminal, plain lines in a pipe, and with --json only
 * errors, on stderr (unless --progress ndjson, which carries them, owns stderr).
 */
function screenReporter(json: boolean, ndjson: boolean, io: CliIo, title: string): RunReporter {
  if (json) {
    if (ndjson) return silentReporter;
    return {
      ...silentReporter,
      log: (level, message) => level === 'error' && io.stderr.write(`mediabatch run: ${message}\n`),
    };
  }
  return io.stdout.isTTY ? new TtyReporter(io.stdout, title) : new PlainReporter(io.stdout);
}

/** `plan`'s summary line for this run: the ledger's prices and what it would submit. */
function planLine(manifest: Manifest, ledger: Ledger, regenerateExpired: boolean): string {
  const outputFiles = filesUnder(manifest.outputDir, manifest.file);
  return buildPlan(manifest, planSource(ledger), null, Date.now(), { regenerateExpired, outputFiles })
    .summary;
}

/** The exit code of a run, from why it stopped and the state of the items it was asked to run. */
export function runExitCode(stop: StopReason | null, items: ReadonlyArray<{ state: string }>): ExitCode {
  if (stop?.kind === 'account_refused' || stop?.kind === 'ledger_disagrees') return ExitCode.Refused;
  const settled = items.every((item) => item.state !== 'pending' && item.state !== 'in_flight');
  if (stop?.kind === 'draining' && !settled) return ExitCode.Interrupted;
  return items.every((item) => item.state === 'done') ? ExitCode.Ok : ExitCode.ItemsNotDone;
}

/** The embedded sandbox keeps its jobs beside the ledger (docs/sandbox-state.md). */
const sandboxStatePath = (ledgerPath: string): string => `${ledgerPath}.sandbox.jsonl`;

/** Creates the ledger's folder and takes the run lock; null when another live run holds it. */
function lockLedger(ledgerPath: string): ReturnType<typeof acquireLedgerLock> {
  try {
    mkdirSync(dirname(ledgerPath), { recursive: true, mode: 0o700 });
    return acquireLedgerLock(ledgerPath);
  } catch (error) {
    throw unusableLedger(ledgerPath, error);
  }
}

/** The ledger failed mid-run (disk full, I/O error): the run stops, and says how to go on. */
function ledgerWriteFailure(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error;
  return new UserError(
    `cannot write the ledger ${path}: ${(error as Error).message} (${code}); the run stopped. ` +
      'Fix the cause (free disk space, say) and re-run: every committed step is kept and nothing is paid twice',
    1,
  );
}

/** A ledger that cannot be created or opened is the user's to fix: say which file and why, no stack. */
function unusableLedger(path: string, error: unknown): UserError {
  const code = (error as { code?: unknown }).code;
  const hint =
    code === 'EEXIST' || code === 'ENOTDIR'
      ? ' (a file stands where a folder of its path should be)'
      : code === 'EISDIR'
        ? ' (it is a folder)'
        : code === 'SQLITE_NOTADB'
          ? ' (it is not a mediabatch ledger)'
          : '';
  const reason = error instanceof Error ? error.message : String(error);
  return new UserError(`cannot open the ledger ${path}${hint}: ${reason}; nothing was submitted`);
}
