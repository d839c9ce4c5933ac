import type { Warning } from '../../batch/resolve/warnings.js';
import type { AttemptRecord } from '../../ledger/index.js';
import { formatUsd, formatUsdHuman } from '../../money.js';

/**
 * The run's last word on money (docs/audit.md): the failed or canceled jobs of the batch the
 * service left charged, against its rule that such a job is refunded in full. Null when none is.
 */
export function refundMissingWarning(attempts: readonly AttemptRecord[]): Warning | null {
  const unrefunded = attempts.filter(
    (attempt) =>
      attempt.jobId !== null &&
      (attempt.jobStatus === 'failed' || attempt.jobStatus === 'canceled') &&
      attempt.refundedMicros !== attempt.amountMicros,
  );
  if (unrefunded.length === 0) return null;
  const owed = unrefunded.reduce((sum, attempt) => sum + attempt.amountMicros - attempt.refundedMicros, 0);
  const jobs = unrefunded.map((attempt) => `${attempt.itemId} ${attempt.jobId}`);
  const count = unrefunded.length === 1 ? '1 failed job was' : `${unrefunded.length} failed jobs were`;
  return {
    code: 'refund_missing',
    message:
      `${count} not refunded by the service: ${formatUsdHuman(owed)} owed (${jobs.join(', ')}); ` +
      '`audit` reads them back from the service and writes a dispute bundle',
    fields: { jobs: unrefunded.map((attempt) => attempt.jobId), owed_usd: formatUsd(owed) },
  };
}

/**
 * The takes of the run saved in files that are not a container mediabatch reads (docs/checks.md):
 * recorded as unchecked, never failed, and said once with their count.
 */
export function uncheckedWarning(takes: number): Warning {
  const what = takes === 1 ? '1 saved take is' : `${takes} saved takes are`;
  return {
    code: 'outputs_unchecked',
    message: `${what} not in a container mediabatch reads (MP4 or QuickTime): recorded as unchecked, not failed`,
    fields: { takes },
  };
}
