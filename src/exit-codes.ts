import type { CommandOutcome, ErrorCode } from './codes.js';

/**
 * The one table from what the library says (an error's code, a command's outcome) to the exit code
 * a command ends with. The library's values carry no exit codes: the CLI maps them here, and so do
 * the two records documented to hold one (a run's row in the ledger, a run's notification).
 */

/** Exit codes of every command; `docs/commands.md` lists them for users. */
export const ExitCode = {
  /** Every item is done (or the command did what it was asked). */
  Ok: 0,
  /**
   * The run finished, but some items ended failed, expired or over budget; for `export --kept`,
   * a kept file is missing or altered (every record is written all the same).
   */
  ItemsNotDone: 1,
  /** A usage or manifest mistake; nothing was submitted. */
  Usage: 2,
  /**
   * Something outside mediabatch refuses and a person must act before a re-run helps: the service
   * refused the account (401, 402) or does not know the ledger's jobs, another live run holds the
   * ledger, or the output disk refused files mid-run (full, read-only, not writable).
   */
  Refused: 3,
  /**
   * `audit`: the service's records and the ledger's disagree, or money is owed (a failed job not
   * refunded, a charge over max_cost_usd, a job only one side knows); docs/audit.md.
   */
  Unreconciled: 4,
  /** A bug in mediabatch, not a user mistake (BSD's EX_SOFTWARE). */
  Internal: 70,
  /** Interrupted; the ledger is consistent and a re-run resumes. */
  Interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** One line per exit code, for help and docs; the record type makes a new code need a meaning. */
const EXIT_CODE_MEANINGS: Record<keyof typeof ExitCode, string> = {
  Ok: 'every item is done, or the command did what it was asked',
  ItemsNotDone:
    'the run finished, but some items failed, expired or did not fit the budget; or it stopped early ' +
    '(stop-loss, no route, a check of your own that cannot run, service unreachable before anything was sent), leaving the rest pending; ' +
    'export --kept: a kept file is missing or not the bytes saved (every record is still written)',
  Usage:
    'a mistake in the command line, the manifest or the service address (wrong URL, another ' +
    "service than the ledger's, an output folder another batch owns or one that cannot take the files, " +
    "a --html FILE that is not a gallery, a manifest that is not its shared batch's definition); nothing was " +
    'submitted or overwritten; or a shared batch was redefined while a run worked on it, which then stopped ' +
    'submitting and saved what it had in flight',
  Refused:
    'the service refused the account (401, 402), does not know jobs the ledger holds, another ' +
    'live run holds the ledger, or the output disk refused files mid-run (full, read-only, not ' +
    'writable); items were left resumable',
  Unreconciled:
    'audit: something is owed or unexplained (a failed or canceled job not refunded, a charge over ' +
    'max_cost_usd, a job of the batch only the service or only the ledger knows, net spends that differ); ' +
    'each problem is listed, and --out writes the dispute bundle',
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

/** The exit code of every command's outcome; the record type makes a new outcome need one. */
const EXIT_CODE_OF_OUTCOME: Readonly<Record<CommandOutcome, ExitCode>> = {
  done: ExitCode.Ok,
  not_done: ExitCode.ItemsNotDone,
  refused: ExitCode.Refused,
  // A batch redefined under the run: the same exit code as the refusal at a run's start.
  redefined: ExitCode.Usage,
  interrupted: ExitCode.Interrupted,
  unreconciled: ExitCode.Unreconciled,
};

/** The exit code of every error code; the record type makes a new code need one. */
const EXIT_CODE_OF_ERROR: Readonly<Record<ErrorCode, ExitCode>> = {
  invalid_usage: ExitCode.Usage,
  invalid_option: ExitCode.Usage,
  manifest_invalid: ExitCode.Usage,
  setting_invalid: ExitCode.Usage,
  selection_empty: ExitCode.Usage,
  service_missing: ExitCode.Usage,
  api_key_missing: ExitCode.Usage,
  service_wrong_route: ExitCode.Usage,
  not_the_service: ExitCode.Usage,
  service_host_unknown: ExitCode.Usage,
  service_unreachable: ExitCode.ItemsNotDone,
  service_read_failed: ExitCode.Refused,
  account_refused: ExitCode.Refused,
  ledger_held: ExitCode.Refused,
  ledger_other_service: ExitCode.Usage,
  ledger_unusable: ExitCode.Usage,
  ledger_read_failed: ExitCode.ItemsNotDone,
  ledger_write_failed: ExitCode.ItemsNotDone,
  ledger_lost: ExitCode.Usage,
  ledger_not_empty: ExitCode.Usage,
  ledger_missing: ExitCode.Usage,
  output_owned: ExitCode.Usage,
  output_unusable: ExitCode.Usage,
  target_refused: ExitCode.Usage,
  write_failed: ExitCode.ItemsNotDone,
  keep_invalid: ExitCode.Usage,
  keep_file_missing: ExitCode.Usage,
  definition_differs: ExitCode.Usage,
  definition_missing: ExitCode.Usage,
  output_dir_unknown: ExitCode.Usage,
  plan_invalid: ExitCode.Usage,
  plan_differs: ExitCode.Usage,
};

export function exitCodeOfOutcome(outcome: CommandOutcome): ExitCode {
  return EXIT_CODE_OF_OUTCOME[outcome];
}

/** The exit code of an error a command ended with: a known code's, else Internal (a bug). */
export function exitCodeOfError(code: string): ExitCode {
  return Object.hasOwn(EXIT_CODE_OF_ERROR, code) ? EXIT_CODE_OF_ERROR[code as ErrorCode] : ExitCode.Internal;
}

/** Every error code with its exit code, for the docs' table. */
export function errorExitRows(): Array<{ code: ErrorCode; exitCode: ExitCode }> {
  return (Object.keys(EXIT_CODE_OF_ERROR) as ErrorCode[]).map((code) => ({
    code,
    exitCode: EXIT_CODE_OF_ERROR[code],
  }));
}
