import { ExitCode } from '../../errors.js';
import { forSandbox, ledgerPathFor, manifestOrExit } from '../../batch/placement.js';
import { readRedoIds } from '../../batch/redo-list.js';
import { type RunOutcome, type RunView, runManifest } from '../../batch/run-batch.js';
import { readNoticeSettings } from '../../batch/run-notices.js';
import { runSettings } from '../../batch/run-settings.js';
import { millis } from '../../batch/service-check.js';
import { checkTitle } from '../../ui/run-view.js';
import { formatRunSummary } from '../../ui/summary.js';
import type { CliIo, Command } from '../io.js';
import type { CommandArgs } from '../parse-args.js';
import { runProgress } from '../run-progress.js';
import { statusJson } from './status.js';

/** `run`: flags in, the library's run, the terminal out (docs/commands.md). */
export const runCommand: Command<'run'> = async (args, io) => {
  const { values } = args;
  // A sandbox run saves its placeholder videos apart from real results (docs/services.md).
  const manifest = forSandbox(manifestOrExit(args.positionals[0], io), values.sandbox);
  // Checked in the order a person reads the command line: flags first, then where to connect.
  const redo = readRedoIds(values.redo, io.cwd);
  const pollIntervalMs = millis(values['poll-interval'], '--poll-interval');
  const settings = runSettings(
    {
      sandbox: values.sandbox,
      baseUrl: values['base-url'],
      redo,
      only: values.only,
      pollIntervalMs,
      regenerateExpired: values['regenerate-expired'],
      retryFailed: values['retry-failed'],
    },
    manifest,
    io,
  );
  const notices = readNoticeSettings(
    { notify: values.notify, onComplete: values['on-complete'] },
    manifest,
    io,
  );
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  const outcome = await runManifest(
    {
      manifest,
      ledgerPath,
      settings,
      notices,
      named: { manifest: args.positionals[0]!, ledger: values.ledger, baseUrl: values['base-url'] },
    },
    terminalView(args, io, `${manifest.name} (${manifest.items.length} items)`),
  );
  if (!outcome.started) io.stderr.write('mediabatch run: interrupted before anything was submitted\n');
  // A drain through an outage leaves resends waiting in the background: the ledger is closed and
  // consistent, so the process ends now instead of after their timers.
  else if (outcome.exitCode === ExitCode.Interrupted) io.exit(ExitCode.Interrupted);
  return outcome.exitCode;
};

/** The run in a terminal: words on stdout (stderr with --json), the live view or plain lines. */
function terminalView(args: CommandArgs<'run'>, io: CliIo, title: string): RunView {
  const { values } = args;
  return {
    host: io,
    sandboxStarted: (baseUrl, ledgerPath, outputDir) => {
      if (!values.json)
        io.stdout.write(
          `Running against the embedded sandbox at ${baseUrl}: placeholder videos, no real spend.\n` +
            `  ledger ${ledgerPath}, files in ${outputDir}\n`,
        );
    },
    notice: (text) => (values.json ? io.stderr : io.stdout).write(text),
    warn: (line) => io.stderr.write(`mediabatch run: ${line}\n`),
    start: (planLine, checked) => {
      if (!values.json) io.stdout.write(`${planLine}\n`);
      const progress = runProgress(
        {
          json: values.json,
          ndjson: values.progress === 'ndjson',
          title,
          planLine,
          checked: checkTitle(checked.service, checked.answer),
        },
        io,
      );
      return {
        reporter: progress.reporter,
        finish: async (stop) => progress.live?.finish(stop),
        finished: (exitCode) => progress.ndjson?.finished(exitCode),
      };
    },
    onInterrupt: io.onInterrupt,
    exit: io.exit,
    ended: (outcome: RunOutcome) =>
      io.stdout.write(
        values.json
          ? statusJson(outcome.report, outcome.service)
          : formatRunSummary(outcome.report, outcome.stop, outcome.ledgerPath, outcome.only),
      ),
  };
}
