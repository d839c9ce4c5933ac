import type { Outcome } from '../../codes.js';
import { cleanText } from '../../documents/clean-text.js';
import type { StatusReport } from '../../documents/status-report.js';
import type { ValueAtRisk } from '../../documents/value-at-risk.js';
import { exitCodeOfOutcome } from '../../exit-codes.js';
import { notFittingLine, unspecifiedShortfallWords } from '../../runner/budget-words.js';
import type { StopReason } from '../../runner/stop-rules.js';

/**
 * What a run tells the outside when it stops or ends: the body of a `--notify` POST and the JSON
 * an `--on-complete` command reads. Counts and money are `run --json`'s totals; it names paths,
 * never the API key, a signed URL or a request body (docs/overnight.md shows one).
 */
export interface RunNotice {
  event: 'run.stopped' | 'run.finished';
  manifest: string;
  /** The service the ledger belongs to (docs/services.md); null before any answered. */
  service: string | null;
  /** Null while the run goes on (run.stopped). */
  /** How the run ended (`run.finished` only; null before). */
  outcome: Outcome | null;
  exit_code: number | null;
  stop: NoticeStop | null;
  totals: StatusReport['totals'];
  value_at_risk: ValueAtRisk;
  ledger: string;
  output_dir: string;
  at: string;
}

export interface NoticeStop {
  /** A StopReason's kind, or `budget` when items did not fit in budget_usd. */
  kind: string;
  code: string | null;
  message: string;
}

export interface NoticeContext {
  report: StatusReport;
  service: string | null;
  ledger: string;
  outputDir: string;
  now: number;
}

/** The stop a notice reports: the run's own, else the budget when it kept items back. */
export function noticeStop(
  stop: StopReason | null,
  message: string | null,
  report: Pick<StatusReport, 'totals' | 'items'>,
): NoticeStop | null {
  if (stop !== null) {
    return { kind: stop.kind, code: stopCode(stop), message: cleanText(message ?? stop.kind) };
  }
  const { totals } = report;
  if (totals.budget_exceeded === 0) return null;
  // The first item's own words (the ledger's detail): what it reserves, the prices seen, the ways out.
  const first = report.items.find((item) => item.state === 'budget_exceeded' && item.error?.message);
  return {
    kind: 'budget',
    code: 'budget_exceeded',
    message: first
      ? notFittingLine(totals.budget_exceeded, 'did not fit', first.id, first.error!.message)
      : unspecifiedShortfallWords(totals.budget_exceeded),
  };
}

function stopCode(stop: StopReason): string | null {
  switch (stop.kind) {
    case 'account_refused':
    case 'service_route':
    case 'disk_refuses':
      return stop.code;
    case 'stop_loss':
      return stop.signature;
    default:
      return null;
  }
}

export function runNotice(
  event: RunNotice['event'],
  context: NoticeContext,
  stop: NoticeStop | null,
  outcome: Outcome | null,
): RunNotice {
  return {
    event,
    manifest: context.report.manifest,
    service: context.service,
    outcome,
    // The exit code `mediabatch run` ends with for that outcome (exit-codes.ts): a documented field.
    exit_code: outcome === null ? null : exitCodeOfOutcome(outcome),
    stop,
    totals: context.report.totals,
    value_at_risk: context.report.value_at_risk,
    ledger: context.ledger,
    output_dir: context.outputDir,
    at: new Date(context.now).toISOString(),
  };
}
