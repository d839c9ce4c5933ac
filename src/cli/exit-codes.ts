import { ExitCode } from '../errors.js';

/** One line per exit code, for help and docs; the record type makes a new code need a meaning. */
const EXIT_CODE_MEANINGS: Record<keyof typeof ExitCode, string> = {
  Ok: 'every item is done, or the command did what it was asked',
  ItemsNotDone:
    'the run finished, but some items failed, expired or did not fit the budget; or it stopped early ' +
    '(stop-loss, no route, service unreachable before anything was sent), leaving the rest pending',
  Usage:
    'a mistake in the command line, the manifest or the service address (wrong URL, another ' +
    "service than the ledger's, an output folder another batch owns or one that cannot take the files, " +
    'a --html FILE that is not a gallery); nothing was submitted or overwritten',
  Refused:
    'the service refused the account (401, 402), does not know jobs the ledger holds, another ' +
    'live run holds the ledger, or the output disk refused files mid-run (full, read-only, not ' +
    'writable); items were left resumable',
  Internal: 'a bug in mediabatch; MEDIABATCH_DEBUG=1 shows where',
  Interrupted: 'interrupted; the ledger is consistent, and running the same command resumes',
};

export function exitCodeRows(): Array<{ code: number; name: string; meaning: string }> {
  return (Object.keys(ExitCode) as Array<keyof typeof ExitCode>).map((name) => ({
    code: ExitCode[name],
    name,
    meaning: EXIT_CODE_MEANINGS[name],
  }));
}
