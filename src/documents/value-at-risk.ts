import { type AttemptRecord, attemptSpentMicros } from '../ledger/index.js';
import { formatUsd, humanUsd } from '../money.js';

/**
 * Value at risk: outputs paid for whose files are not saved yet, and are still on the service.
 * The service deletes them at `expires_at`; after that the money is spent and the result lost.
 * Pure: `status`, `plan` and the run's notifications compute it from the ledger's unsaved
 * succeeded attempts (status-report.ts unsavedOf / Ledger.unsavedSucceeded) and a clock.
 */
export interface ValueAtRisk {
  outputs: number;
  /** What those attempts cost, net of refunds: the same sums as the ledger's. */
  cost_usd: string;
  earliest_expires_at: string | null;
  /** Seconds from now to earliest_expires_at; null when nothing is at risk. */
  seconds_left: number | null;
  /** The earliest expires within URGENT_MS: the text says so first. */
  urgent: boolean;
}

/** Under this much time left, status and plan put the warning first. */
export const URGENT_MS = 6 * 60 * 60 * 1000;

type Unsaved = Pick<
  AttemptRecord,
  'jobStatus' | 'filesSaved' | 'expiresAt' | 'amountMicros' | 'refundedMicros'
>;

export function valueAtRisk(unsaved: readonly Unsaved[], now: number): ValueAtRisk {
  let outputs = 0;
  let costMicros = 0;
  let earliest: { at: number; text: string } | null = null;
  for (const attempt of unsaved) {
    if (attempt.jobStatus !== 'succeeded' || attempt.filesSaved || attempt.expiresAt === null) continue;
    const at = Date.parse(attempt.expiresAt);
    // Past its expiry the output is gone: lost, no longer at risk.
    if (!(at > now)) continue;
    outputs += 1;
    costMicros += attemptSpentMicros(attempt);
    if (earliest === null || at < earliest.at) earliest = { at, text: attempt.expiresAt };
  }
  const left = earliest === null ? null : earliest.at - now;
  return {
    outputs,
    cost_usd: formatUsd(costMicros),
    earliest_expires_at: earliest?.text ?? null,
    seconds_left: left === null ? null : Math.floor(left / 1000),
    urgent: left !== null && left <= URGENT_MS,
  };
}

/** `5h12m`, `45m`, `2d03h`: time left, for people (minutes rounded down). */
export function formatTimeLeft(seconds: number): string {
  const minutes = Math.max(0, Math.floor(seconds / 60));
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d${String(hours % 24).padStart(2, '0')}h`;
}

/**
 * The sentence status and plan print, or null when nothing is at risk. `saveCommand` is the
 * command that saves them (the same `run`), named when time is short.
 */
export function valueAtRiskText(risk: ValueAtRisk, saveCommand: string): string | null {
  if (risk.outputs === 0 || risk.seconds_left === null) return null;
  const what = `${risk.outputs} paid output${risk.outputs === 1 ? ' is' : 's are'} not saved yet (${humanUsd(risk.cost_usd)})`;
  const when = `the first expires in ${formatTimeLeft(risk.seconds_left)} (${risk.earliest_expires_at})`;
  return risk.urgent
    ? `AT RISK: ${what}; ${when}. Save them now: ${saveCommand}`
    : `at risk: ${what}; ${when}; \`${saveCommand}\` saves them`;
}
