/**
 * What the library tells a caller that is neither an error nor a result: a structured warning,
 * which the CLI words on stderr and an API run emits as an event. No flag names here: a warning
 * carries its code and plain words; the CLI adds the command name.
 */
export const WARNING_CODES = [
  /** The pre-flight is trying the service again (it did not answer, or not usably). */
  'service_retry',
  /** The service is slow to answer; the run goes on and resends what goes unanswered. */
  'service_slow',
  /** A base URL is set but no API key, so `plan` does not check the account. */
  'account_not_checked',
  /** The owner marker could not be written into the output location; the next run claims it. */
  'output_unclaimed',
  /** Notifications go unsigned: no notify secret is set. */
  'notify_unsigned',
  /** A notification was delivered. */
  'notify_delivered',
  /** A notification could not be delivered; the run's outcome is unchanged. */
  'notify_failed',
  /** The --on-complete command failed; the run's outcome is unchanged. */
  'hook_failed',
  /** The credentials that signed a gallery's links expire before the lifetime asked for. */
  'links_expire_early',
  /** A shared ledger's runners on other machines cannot reach this machine's own output folder. */
  'output_not_shared',
] as const;

export type WarningCode = (typeof WARNING_CODES)[number];

export interface Warning {
  code: WarningCode;
  message: string;
}

export type Warn = (warning: Warning) => void;

export const ignoreWarnings: Warn = () => undefined;
