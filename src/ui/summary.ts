import { humanUsd } from '../money.js';
import type { StatusReport } from '../report/status-report.js';
import type { StopReason } from '../runner/policy.js';

/** The closing words of a run: what happened, and what to do next. */
export function formatRunSummary(report: StatusReport, stop: StopReason | null, ledgerPath: string): string {
  const { totals } = report;
  const lines = [
    '',
    `${report.manifest}: ${totals.done}/${totals.items} done, ${totals.failed} failed, ${totals.budget_exceeded} over budget, ${totals.expired} expired, ${totals.pending + totals.in_flight} unfinished`,
    `spent ${humanUsd(totals.spent_usd)} (refunded ${humanUsd(totals.refunded_usd)})${totals.budget_usd === null ? '' : `, budget left ${humanUsd(totals.budget_left_usd)} of ${humanUsd(totals.budget_usd)}`}`,
  ];
  const failed = report.items.filter((item) => item.state === 'failed');
  if (failed.length > 0) {
    lines.push('failed items:');
    for (const item of failed.slice(0, 20))
      lines.push(`  ${item.id}: ${item.error?.code}: ${item.error?.message}`);
    if (failed.length > 20) lines.push(`  ... and ${failed.length - 20} more (mediabatch status --json)`);
    lines.push('  content_rejected: change the prompt; retries_exhausted: re-run to try again.');
  }
  if (totals.budget_exceeded > 0)
    lines.push('some items did not fit in budget_usd: raise it and re-run to submit them.');
  if (totals.expired > 0)
    lines.push(
      'expired outputs cannot be recovered: re-run with --regenerate-expired to pay for them again.',
    );
  for (const warning of report.warnings) lines.push(`warning: ${warning}`);
  if (stop?.kind === 'account_refused') {
    lines.push(
      `the service refused the account (${stop.code}): fix the key or the wallet, then re-run; nothing is lost.`,
    );
  } else if (stop?.kind === 'draining' || totals.pending + totals.in_flight > 0) {
    lines.push('interrupted or unfinished: re-run the same command to resume; nothing is paid twice.');
  }
  lines.push(`ledger: ${ledgerPath}`, '');
  return lines.join('\n');
}
