import type { Fields } from '../../errors.js';

/**
 * What the library tells a caller that is neither an error nor a result: a structured warning,
 * which the CLI words on stderr and an API run emits as an event. No flag names here: a warning
 * carries its code, plain words and its fields; the CLI words it and adds the command name.
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
  /** The `onComplete` command failed; the run's outcome is unchanged. */
  'hook_failed',
  /** The credentials that signed a gallery's links expire before the lifetime asked for. */
  'links_expire_early',
  /** A run could not write or refresh its gallery (`target`: where); the run's outcome is unchanged. */
  'gallery_not_written',
  /** A shared ledger's runners on other machines cannot reach this machine's own output folder. */
  'output_not_shared',
  /** A shared ledger's database stopped answering: a step waits for it (`waitSeconds`), said once per wait. */
  'ledger_waiting',
  /** A run ends having seen failed or canceled jobs the service left charged (`jobs`, `owed_usd`; docs/audit.md). */
  'refund_missing',
  /** Saved takes whose files are not a container mediabatch reads were left unchecked (`takes`; docs/checks.md). */
  'outputs_unchecked',
  /**
   * `status`, `export`: the ledger read records the batch but no longer owns its output folder
   * (another ledger, a copy, does); it is read as it recorded the batch (`owner`).
   */
  'ledger_not_owner',
  /** The embedded sandbox hit a bug of its own (answered as a 500) or could not write its state file (`kind`). */
  'sandbox_problem',
] as const;

export type WarningCode = (typeof WARNING_CODES)[number];

export interface Warning {
  code: WarningCode;
  message: string;
  /** What explains it (`option`, `argv`, ...), as an error's `fields`. */
  fields?: Fields;
}

/** What a run says before it spends, for a person to read (the `notice` event). */
export const NOTICE_CODES = [
  /** `retryFailed`: how many failed items go out again and what they may cost (`retried`, `held`). */
  'retry_failed',
  /** `retryFailed` was asked for, but no item failed for a final reason. */
  'retry_failed_none',
  /** Items whose paid outputs were lost or expired are paid for again (`regenerateExpired`). */
  'pays_again',
  /** `redefine`: the manifest became its shared batch's next definition (`revision`). */
  'batch_redefined',
] as const;

export type NoticeCode = (typeof NOTICE_CODES)[number];

export interface Notice {
  code: NoticeCode;
  /** One or more lines, each ending in a newline. */
  message: string;
  fields?: Fields;
}

export type Warn = (warning: Warning) => void;

export const ignoreWarnings: Warn = () => undefined;
