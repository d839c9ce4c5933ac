import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MediaGenClient } from '../../api/client.js';
import { ExitCode, UserError } from '../../errors.js';
import { stopOnJobsUnknownToLedger } from '../../import/known-jobs-check.js';
import { Ledger } from '../../ledger/ledger.js';
import { acquireLedgerLock } from '../../ledger/lock.js';
import { buildStatusReport } from '../../report/status-report.js';
import { systemClock } from '../../runner/clock.js';
import type { RunReporter } from '../../runner/reporter.js';
import { silentReporter } from '../../runner/reporter.js';
import { runBatch } from '../../runner/run-loop.js';
import { demoSandboxConfig, type SandboxHandle, startSandbox } from '../../sandbox/index.js';
import { ListrReporter } from '../../ui/listr-reporter.js';
import { PlainReporter } from '../../ui/plain-reporter.js';
import { formatRunSummary } from '../../ui/summary.js';
import { connectionFromEnv, ledgerPathFor, manifestOrExit, parsePositiveSeconds } from '../common.js';
import type { Command } from '../io.js';
import { readRedoIds, redoProblem } from '../redo-list.js';

export const runCommand: Command<'run'> = async ({ values, positionals }, io) => {
  const manifest = manifestOrExit(positionals[0], io);
  const redo = readRedoIds(values.redo, io.cwd);
  const pollSeconds = parsePositiveSeconds(values['poll-interval'], '--poll-interval');
  let connection = values.sandbox ? null : connectionFromEnv(values['base-url'], io);
  if (!values.sandbox && !connection) {
    throw new UserError(
      'no service to run against: pass --base-url URL (or set MEDIAGEN_BASE_URL), or try the manifest offline with --sandbox',
    );
  }

  const ledgerPath = ledgerPathFor(manifest, values.ledger, io);
  const lock = lockLedger(ledgerPath);
  if (!lock) {
    io.stderr.write(
      `mediabatch run: the ledger ${ledgerPath} is held by another live run; nothing was changed\n`,
    );
    return ExitCode.Refused;
  }
  let sandbox: SandboxHandle | null = null;
  let ledger: Ledger | null = null;
  let listr: ListrReporter | null = null;
  try {
    if (values.sandbox) {
      // Its state lives beside the ledger, so a killed run resumes against the jobs it left behind.
      sandbox = await startSandbox(demoSandboxConfig(), { statePath: sandboxStatePath(ledgerPath) });
      connection = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey };
      if (!values.json) io.stdout.write(`Running against the embedded sandbox at ${sandbox.baseUrl}\n`);
    }
    try {
      ledger = Ledger.open(ledgerPath, manifest.name, manifest.file);
    } catch (error) {
      throw unusableLedger(ledgerPath, error);
    }
    const redoRefused = redo.length === 0 ? null : redoProblem(redo, manifest, ledger.listItems());
    if (redoRefused !== null) throw new UserError(`${redoRefused}; nothing was submitted`);
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
    const openLedger = ledger;
    io.onInterrupt((count) => {
      if (count < 2) return;
      // Every ledger write is one synchronous transaction, so the ledger is consistent right now.
      openLedger.close();
      lock.release();
      io.exit(ExitCode.Interrupted);
    });

    // --json keeps stdout for its one document; errors still reach the user, on stderr.
    let reporter: RunReporter = {
      ...silentReporter,
      log: (level, message) => level === 'error' && io.stderr.write(`mediabatch run: ${message}\n`),
    };
    if (!values.json) {
      if (io.stdout.isTTY) {
        listr = new ListrReporter();
        listr.start(`${manifest.name} (${manifest.items.length} items)`);
        reporter = listr;
      } else reporter = new PlainReporter(io.stdout);
    }
    const timeoutSeconds = parsePositiveSeconds(io.env.MEDIABATCH_HTTP_TIMEOUT, 'MEDIABATCH_HTTP_TIMEOUT');
    const client = new MediaGenClient({
      baseUrl: connection!.baseUrl,
      apiKey: connection!.apiKey,
      ...(timeoutSeconds === null ? {} : { timeoutMs: timeoutSeconds * 1000 }),
    });
    const result = await runBatch(
      { client, ledger, manifest, clock: systemClock, random: Math.random, reporter },
      {
        pollIntervalMs: pollSeconds === null ? null : pollSeconds * 1000,
        regenerateExpired: values['regenerate-expired'],
        downloadConcurrency: 4,
        defaultSlotLimit: 3,
        redo,
        ...(timeoutSeconds === null ? {} : { downloadTimeoutMs: timeoutSeconds * 1000 }),
      },
      (drain) => io.onInterrupt((count) => count === 1 && drain()),
    ).catch((error: unknown) => {
      throw ledgerWriteFailure(ledgerPath, error);
    });
    await listr?.stop();
    listr = null;

    const report = buildStatusReport(
      manifest,
      { items: ledger.listItems(), attempts: ledger.listAttempts(), files: ledger.listFiles() },
      Date.now(),
    );
    const settled = report.items.every((item) => item.state !== 'pending' && item.state !== 'in_flight');
    let exitCode: ExitCode;
    if (result.stop?.kind === 'account_refused') exitCode = ExitCode.Refused;
    else if (result.stop?.kind === 'draining' && !settled) exitCode = ExitCode.Interrupted;
    else exitCode = report.totals.done === report.totals.items ? ExitCode.Ok : ExitCode.ItemsNotDone;
    ledger.endRun(runId, exitCode);
    if (values.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else io.stdout.write(formatRunSummary(report, result.stop, ledgerPath));
    return exitCode;
  } finally {
    await listr?.stop();
    ledger?.close();
    lock.release();
    await sandbox?.close();
  }
};

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
