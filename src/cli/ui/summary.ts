import type { StopReason } from '../../index.js';
import { humanUsd } from '../../money.js';
import {
  afterBudgetStopWords,
  notFittingLine,
  type StatusReport,
  unspecifiedShortfallWords,
} from '../../render.js';

/** The closing words of a run: what happened, and what to do next. */
export function formatRunSummary(
  report: StatusReport,
  stop: StopReason | null,
  ledgerPath: string,
  only: ReadonlySet<string> | null = null,
  heldBack: readonly string[] = [],
): string {
  const { totals } = report;
  const lines = [
    '',
    ...(only
      ? [`--only: ${only.size} of ${totals.items} items were run; the others were left as they were`]
      : []),
    `${report.manifest}: ${totals.done}/${totals.items} done, ${totals.failed} failed, ${totals.checks_failed ? `${totals.checks_failed} failed checks, ` : ''}${totals.budget_exceeded} over budget, ${totals.expired} expired, ${totals.pending + totals.in_flight} unfinished`,
    `spent ${humanUsd(totals.spent_usd)} (refunded ${humanUsd(totals.refunded_usd)})${totals.budget_usd === null ? '' : `, budget left ${humanUsd(totals.budget_left_usd)} of ${humanUsd(totals.budget_usd)}`}`,
  ];
  const failed = report.items.filter((item) => item.state === 'failed' || item.state === 'checks_failed');
  if (failed.length > 0) {
    lines.push('failed items:');
    for (const item of failed.slice(0, 20))
      lines.push(`  ${item.id}: ${item.error?.code}: ${item.error?.message}`);
    if (failed.length > 20) lines.push(`  ... and ${failed.length - 20} more (mediabatch status --json)`);
    const hints = failureHints(new Set(failed.map((item) => item.error?.code ?? '')));
    if (hints) lines.push(`  ${hints}`);
  }
  const overBudget = budgetLine(report);
  if (overBudget) lines.push(overBudget);
  if (totals.expired > 0)
    lines.push(
      'expired outputs cannot be recovered: re-run with --regenerate-expired to pay for them again.',
    );
  for (const warning of report.warnings) lines.push(`warning: ${warning}`);
  const stopLine = stop ? STOP_LINES[stop.kind]?.(stop as never) : undefined;
  if (stopLine) {
    lines.push(stop?.kind === 'stop_loss' ? `${stopLine}${alreadySent(report, stop)}` : stopLine);
  } else {
    lines.push(...whatIsLeft(report, only, new Set(heldBack)));
  }
  lines.push(`ledger: ${ledgerPath}`, '');
  return lines.join('\n');
}

/**
 * How many items did not fit, then the first one's own words (the ledger's detail, the same rule
 * and words as plan's): what it reserves, the prices seen, and the ways out.
 */
function budgetLine(report: StatusReport): string | null {
  if (report.totals.budget_exceeded === 0) return null;
  const first = report.items.find((item) => item.state === 'budget_exceeded' && item.error?.message);
  if (!first) return `${unspecifiedShortfallWords(report.totals.budget_exceeded)}.`;
  const line = notFittingLine(report.totals.budget_exceeded, 'did not fit', first.id, first.error!.message);
  return afterBudgetStopWords(line, first.error!.message);
}

/**
 * What a re-run would do for the items left pending or in flight among those the run was asked to
 * run (--only: the selected ones): resume them, unless a file in their way keeps them back (said
 * above, item by item). A run that settled every item, drained or not, has nothing to resume.
 */
function whatIsLeft(
  report: StatusReport,
  only: ReadonlySet<string> | null,
  held: ReadonlySet<string>,
): string[] {
  const left = report.items.filter(
    (item) => (only?.has(item.id) ?? true) && (item.state === 'pending' || item.state === 'in_flight'),
  );
  const blocked = left.filter((item) => held.has(item.id)).length;
  const lines: string[] = [];
  if (left.length > blocked)
    lines.push('interrupted or unfinished: re-run the same command to resume; nothing is paid twice.');
  if (blocked > 0)
    lines.push(
      `${blocked} item${blocked === 1 ? ' was' : 's were'} not submitted: a file this ledger did not write is in the way (named above); move it, then re-run.`,
    );
  return lines;
}

/** What to do about each final code that comes back often, for the codes that did fail only. */
const FAILURE_HINTS: Readonly<Record<string, string>> = {
  content_rejected: 'content_rejected: change the prompt',
  retries_exhausted: 'retries_exhausted: re-run to try again',
  canceled: 'canceled: run --retry-failed to submit again',
  max_cost_exceeded: 'max_cost_exceeded: raise max_cost_usd',
  invalid_parameter: 'invalid_parameter: fix the field it names in the manifest',
};

function failureHints(codes: ReadonlySet<string>): string {
  const hints = Object.entries(FAILURE_HINTS).filter(([code]) => codes.has(code));
  return hints.length === 0 ? '' : `${hints.map(([, hint]) => hint).join('; ')}.`;
}

/**
 * What to do after each stop that is the same for every item (docs/services.md). Items were left
 * as they were, so a re-run after the fix goes on where this one stopped.
 */
const STOP_LINES: { [K in StopReason['kind']]?: (stop: Extract<StopReason, { kind: K }>) => string } = {
  account_refused: (stop) =>
    `the service refused the account (${stop.code}): fix the key or the wallet, then re-run; nothing is lost.`,
  ledger_disagrees: (stop) =>
    [
      `the service does not know ${stop.jobs.length} job(s) this ledger holds: ${stop.jobs
        .slice(0, 10)
        .map((job) => `${job.jobId} (${job.itemId})`)
        .join(', ')}${stop.jobs.length > 10 ? ', ...' : ''}.`,
      '  The ledger and the service disagree (another service or account, or the service lost them), so',
      '  nothing was resubmitted: that could pay twice. Check --base-url and MEDIAGEN_API_KEY, then re-run.',
      '  If the service really lost them, `mediabatch forget <manifest>` gives them up (after the service',
      '  confirms it does not know them) and the next run pays for their items again.',
    ].join('\n'),
  service_route: (stop) =>
    `the service has no route for a request (${stop.message}): check --base-url (it ends in /v1); items were left as they were.`,
  disk_refuses: (stop) =>
    `stopped: files could not be saved (${stop.code}): ${stop.message}. Nothing more was submitted; items in flight stay resumable. Fix it, then re-run to save what is still on the service (nothing is paid again).`,
  definition_differs: (stop) => `${stop.message}.`,
  stop_loss: (stop) =>
    `stopped: ${stop.items.length} items in a row failed with ${stop.signature} (${stop.items.join(', ')}), so nothing more was submitted. Fix the cause (in the manifest, say) and re-run.`,
};

/**
 * With several slots, requests already on their way when the stop-loss tripped are answered too
 * (docs/services.md): say how many of them failed, so the count matches the failed items.
 */
function alreadySent(report: StatusReport, stop: Extract<StopReason, { kind: 'stop_loss' }>): string {
  const code = stop.signature.split(' ')[0];
  const counted = new Set(stop.items);
  const more = report.items.filter(
    (item) => item.state === 'failed' && item.error?.code === code && !counted.has(item.id),
  );
  if (more.length === 0) return '';
  const names = more.slice(0, 10).map((item) => item.id);
  return `\n  ${more.length} more (${names.join(', ')}${more.length > 10 ? ', ...' : ''}) had been sent before the stop and failed alike.`;
}
