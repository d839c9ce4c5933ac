/**
 * The words the library ends with, as values a program branches on: the codes its errors carry
 * (docs/api.md lists each with its fields) and the outcomes of a command. No exit code is here: the
 * CLI maps both to one (exit-codes.ts). Nothing here imports from the rest of mediabatch.
 */

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
  /** The service's host name does not exist (the DNS says so: a typo, not an outage); `host` names it, nothing was sent. */
  'service_host_unknown',
  /** run: the service did not answer within the pre-flight window; nothing was sent. */
  'service_unreachable',
  /** import, audit: the service's jobs could not be read (no answer, or not a usable one); nothing was changed. */
  'service_read_failed',
  /** The service refused the account (401, 402). */
  'account_refused',
  /** Another live run holds the ledger (copy-ledger: either of its two). */
  'ledger_held',
  /** The ledger belongs to another service (`bound` and `current` name both). */
  'ledger_other_service',
  /** The ledger cannot be created or opened. */
  'ledger_unusable',
  /** The ledger failed while a command read it (an I/O error, its database lost): nothing was changed. */
  'ledger_read_failed',
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
  /**
   * A path given to write at is refused by the door for named files (docs/results.md): a protected
   * file, anything in an output folder a batch owns, a folder, a file of another kind without `force`.
   */
  'target_refused',
  /** A file or object could not be written (or, for a gallery in S3, its earlier page read). */
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
 * How a run ended, as its result says it (docs/api.md): every item it was asked to run is done;
 * some are not (failed, expired, over budget, or left pending by a stop); the service or the disk
 * refused; its shared batch was redefined under it; it was interrupted (drained) with items left.
 */
export const OUTCOMES = ['done', 'not_done', 'refused', 'redefined', 'interrupted'] as const;

export type Outcome = (typeof OUTCOMES)[number];

/**
 * How every command ends (docs/api.md): a run's outcomes, and audit's `unreconciled` (something is
 * owed or unexplained). The other commands end `done`, or `not_done` where their result says some
 * of the work is not (a check that failed or could not run, a kept file not as saved, a job the
 * service still knows), or `refused` (plan: the service refused the account).
 */
export const COMMAND_OUTCOMES = [...OUTCOMES, 'unreconciled'] as const;

export type CommandOutcome = (typeof COMMAND_OUTCOMES)[number];
