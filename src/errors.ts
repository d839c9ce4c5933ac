/**
 * The bottom layer's errors: what every other layer may throw or return to say how a command ends.
 * Nothing here imports from the rest of mediabatch.
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

/**
 * What went wrong, as a value a program can branch on (docs/api.md lists each with its exit code).
 * The message says the same in words; the code never changes when the words do.
 */
export const ERROR_CODES = [
  /** A usage mistake no other code names (a value out of range, a flag combination). */
  'invalid_usage',
  /** An API call got an unknown option or a value of the wrong kind (`option` names it). */
  'invalid_option',
  /** The manifest has problems (`problems` lists each with file, line and column). */
  'manifest_invalid',
  /** An environment variable the library reads has a value it cannot use (`variable` names it). */
  'setting_invalid',
  /** Selected items (`only`, `redo`, `forget` ids) name no item, or none that can be selected. */
  'selection_empty',
  /** No service to talk to: no base URL and no sandbox. */
  'service_missing',
  /** A base URL without an API key. */
  'api_key_missing',
  /** The address answers, but has no such route (a base URL without /v1). */
  'service_wrong_route',
  /** The address answers, but not as the service does. */
  'not_the_service',
  /** The service did not answer within the pre-flight window. */
  'service_unreachable',
  /** The service refused the account (401, 402). */
  'account_refused',
  /** Another live run holds the ledger (copy-ledger: either of its two). */
  'ledger_held',
  /** The ledger belongs to another service (`bound` and `current` name both). */
  'ledger_other_service',
  /** The ledger cannot be created, opened or read. */
  'ledger_unusable',
  /** The ledger failed while a run wrote to it (disk full, I/O error), or a copy's target while it took the copy. */
  'ledger_write_failed',
  /** A new ledger while the service holds this manifest's jobs: the ledger was lost. */
  'ledger_lost',
  /** import into a ledger that already records attempts; copy-ledger into one that records the batch. */
  'ledger_not_empty',
  /** forget without a ledger; copy-ledger from a ledger that is not there or records no such batch. */
  'ledger_missing',
  /** The output location belongs to another batch (`owner` names its manifest and ledger). */
  'output_owned',
  /** The output location cannot be used (unwritable, unreachable, no room, bad settings). */
  'output_unusable',
  /** A file the command would write is refused (a guarded file, a folder, a foreign file). */
  'target_refused',
  /** A file or object could not be written. */
  'write_failed',
  /** keep: an entry is not ID:VARIANT[.TAKE], names no manifest item, or a take that saved no file (`entry`, and `file`, `line` for a list file's). */
  'keep_invalid',
  /** keep: the chosen take's file is missing or not the size it was saved with (`path`). */
  'keep_file_missing',
  /**
   * A shared batch's definition (its ledger's current `revision`) is not the manifest's: the
   * `settings` by name and the items `added`, `removed` and `changed` by id; `redefine` makes the
   * manifest the batch's. Also a run's stop when the batch is redefined under it.
   */
  'definition_differs',
  /**
   * A runner without a manifest (`batch`) names a batch its shared ledger holds no definition of:
   * unknown there, or never run with its manifest on it (`batch`, `ledger`).
   */
  'definition_missing',
  /**
   * A runner without a manifest (`batch`) cannot tell where the batch's output folder, relative to
   * the manifest's, is on its machine: `outputDir` missing, not that folder, or the folder lies
   * outside the manifest's (`option: 'outputDir'`, `batch`).
   */
  'output_dir_unknown',
  /** run with `plan`: the file is not an approved plan, or was changed after it was written (`path`). */
  'plan_invalid',
  /**
   * run with `plan`: the approved plan is not what run would do now (the manifest, the items, the
   * prices the ledger knows or the ledger moved); `differences` says what, and nothing was sent.
   */
  'plan_differs',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * What explains an error, a warning or a notice beside its code (docs/api.md): the items, the
 * option involved by its API name (`option: 'redo'`), the values. A message names an option the
 * same way, as `redo` in backticks, never as a command-line flag: the CLI words it as its flag.
 */
export type Fields = Readonly<Record<string, unknown>>;

/** A mistake the user can fix; printed without a stack trace, exit code 2 unless said otherwise. */
export class UserError extends Error {
  readonly exitCode: ExitCode;
  readonly code: ErrorCode;
  readonly fields: Fields;
  constructor(
    message: string,
    exitCode: ExitCode = ExitCode.Usage,
    code: ErrorCode = 'invalid_usage',
    fields: Fields = {},
  ) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
    this.code = code;
    this.fields = fields;
  }
}

/** One line per exit code, for help and docs; the record type makes a new code need a meaning. */
const EXIT_CODE_MEANINGS: Record<keyof typeof ExitCode, string> = {
  Ok: 'every item is done, or the command did what it was asked',
  ItemsNotDone:
    'the run finished, but some items failed, expired or did not fit the budget; or it stopped early ' +
    '(stop-loss, no route, service unreachable before anything was sent), leaving the rest pending; ' +
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
