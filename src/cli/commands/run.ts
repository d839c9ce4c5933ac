import { exitCodeOfOutcome, type RunResult, run } from '../../index.js';
import { commandLine, openBatch } from '../batch-options.js';
import { libraryOptions } from '../flag-row.js';
import type { Command } from '../io.js';
import { TerminalRunView } from '../ui/terminal-run-view.js';
import { cliWords, warnOn } from '../words.js';
import { RUN_FLAGS } from './run-flags.js';

/** `run`: flags in, the library's run, its events drawn on the terminal, the result as the exit code. */
export const runCommand: Command<'run'> = async ({ values, positionals }, io) => {
  const { manifestArg, manifest, options } = await openBatch({ values, positionals }, io, 'run');
  const handle = run(manifest, { ...options, ...libraryOptions(RUN_FLAGS, values) });
  const title = `${manifest.name} (${manifest.items.length} items)`;
  const view = new TerminalRunView(handle, values, io, title, warnOn(io, 'run'), cliWords);
  // The first Ctrl-C drains the run; a second ends the process at once, the ledger consistent.
  io.onInterrupt((count) => {
    if (count === 1) handle.abort();
    else view.quitNow(commandLine('run', manifestArg, values));
  });
  let result: RunResult;
  try {
    result = await handle.result;
  } finally {
    await view.close();
  }
  if (!result.started) io.stderr.write('mediabatch run: interrupted before anything was submitted\n');
  // A drain through an outage leaves resends waiting in the background: the ledger is closed and
  // consistent, so the process ends now instead of after their timers.
  else if (result.outcome === 'interrupted') io.exit(exitCodeOfOutcome(result.outcome));
  return result.outcome;
};
