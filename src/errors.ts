/**
 * The bottom layer's errors: what every other layer may throw or return to say how a command ends.
 * Nothing here imports from the rest of mediabatch.
 */

/** Exit codes of every command; `docs/commands.md` lists them for users. */
export const ExitCode = {
  /** Every item is done (or the command did what it was asked). */
  Ok: 0,
  /** The run finished, but some items ended failed, expired or over budget. */
  ItemsNotDone: 1,
  /** A usage or manifest mistake; nothing was submitted. */
  Usage: 2,
  /**
   * Something outside mediabatch refuses and a person must act before a re-run helps: the service
   * refused the account (401, 402) or does not know the ledger's jobs, another live run holds the
   * ledger, or the output disk refused files mid-run (full, read-only, not writable).
   */
  Refused: 3,
  /** A bug in mediabatch, not a user mistake (BSD's EX_SOFTWARE). */
  Internal: 70,
  /** Interrupted; the ledger is consistent and a re-run resumes. */
  Interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A mistake the user can fix; printed without a stack trace, exit code 2 unless said otherwise. */
export class UserError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = ExitCode.Usage) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
  }
}
