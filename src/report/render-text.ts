import { attemptSpentMicros } from '../ledger/money-totals.js';
import type { AttemptRecord } from '../ledger/records.js';
import { formatUsd } from '../money.js';
import type { PlanDocument, PlanLabel } from './plan-report.js';
import type { StatusItem, StatusReport } from './status-report.js';

/**
 * Plain-text tables for people. Everything shown comes from the ledger or the service, so every
 * cell is cleaned first: a job error message must not be able to move the terminal's cursor or
 * leak a signed URL's query string (its signature) into a log.
 */

// C0/C1 controls (ESC, CR, BEL, ...) and the Unicode line separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
const URL_QUERY = /(\bhttps?:\/\/[^\s?#"'<>]*)\?[^\s"'<>]*/gi;
const URL_USERINFO = /(\bhttps?:\/\/)[^\s/?#@"'<>]+@/gi;
const NEEDS_CLEANING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|:\/\//;

/** One line of safe text: no control characters, no URL credentials or query strings. */
export function cleanText(text: string): string {
  // Most cells (ids, paths, job ids) need nothing: one cheap test keeps 100,000-row tables fast.
  if (!NEEDS_CLEANING.test(text)) return text;
  return text.replace(CONTROL, ' ').replace(URL_USERINFO, '$1').replace(URL_QUERY, '$1?…');
}

/**
 * Pads every column but the last. Very wide cells do not widen the whole column past `maxWidth`;
 * they only push their own row.
 */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  maxWidth = 48,
): string {
  return [...tableChunks(headers, rows, maxWidth)].join('');
}

/** The same table in chunks of lines, so that 100,000 rows never become one string. */
export function* tableChunks(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  maxWidth = 48,
  perChunk = 1000,
): Generator<string> {
  const widths = headers.map((header) => header.length);
  for (const row of rows) {
    for (let i = 0; i < row.length - 1; i++) {
      const length = row[i]!.length;
      if (length > widths[i]! && length <= maxWidth) widths[i] = length;
    }
  }
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  yield `${line(headers)}\n`;
  for (let start = 0; start < rows.length; start += perChunk) {
    const out: string[] = [];
    for (let i = start; i < Math.min(rows.length, start + perChunk); i++) out.push(line(rows[i]!));
    yield `${out.join('\n')}\n`;
  }
}

export interface LedgerNote {
  path: string;
  exists: boolean;
}

function ledgerLine(ledger: LedgerNote): string {
  return ledger.exists
    ? `ledger: ${ledger.path}`
    : `ledger: ${ledger.path} (not created yet: nothing has run)`;
}

const words = (state: string) => state.replace(/_/g, ' ');

function filesOrError(item: StatusItem): string {
  if (item.error) return cleanText(`${item.error.code}: ${item.error.message}`);
  if (item.takes) {
    // Newest first, as the gallery shows them.
    return item.takes.map((take) => `take ${take.take}: ${take.files.map(cleanText).join(', ')}`).join('; ');
  }
  return item.files.map(cleanText).join(', ');
}

function moneyLine(totals: StatusReport['totals']): string {
  const budget =
    totals.budget_usd === null
      ? 'no budget_usd'
      : `budget left $${totals.budget_left_usd} of $${totals.budget_usd}`;
  return `spent $${totals.spent_usd} net (charged $${totals.charged_usd}, refunded $${totals.refunded_usd}), reserved $${totals.reserved_usd}, ${budget}`;
}

function countsLine(report: StatusReport): string {
  const t = report.totals;
  return `${report.manifest}: ${t.items} items: ${t.done} done, ${t.failed} failed, ${t.budget_exceeded} budget exceeded, ${t.expired} expired, ${t.in_flight} in flight, ${t.pending} pending`;
}

function statusRows(report: StatusReport): string[][] {
  return report.items.map((item) => [
    item.id,
    words(item.state),
    String(item.attempts),
    `$${item.cost_usd}`,
    item.job_id === null ? '-' : cleanText(item.job_id),
    filesOrError(item),
  ]);
}

const STATUS_HEADERS = ['ID', 'STATE', 'ATTEMPTS', 'COST', 'JOB', 'FILES / ERROR'];

function statusTable(report: StatusReport): string {
  return renderTable(STATUS_HEADERS, statusRows(report));
}

function footer(warnings: readonly string[], ledger: LedgerNote): string {
  const lines = warnings.map((warning) => `warning: ${cleanText(warning)}`);
  lines.push(ledgerLine(ledger));
  return `${lines.join('\n')}\n`;
}

export function* renderStatusChunks(report: StatusReport, ledger: LedgerNote): Generator<string> {
  yield* tableChunks(STATUS_HEADERS, statusRows(report));
  yield `\n${countsLine(report)}\n${moneyLine(report.totals)}\n${footer(report.warnings, ledger)}`;
}

// ---- plan ------------------------------------------------------------------------------------

const PLAN_WORDS: Record<PlanLabel, string> = {
  new: 'new',
  changed: 'changed',
  in_flight: 'in flight',
  done: 'done',
  retry: 'retry',
  expired: 'expired',
  failed: 'failed (skipped)',
  blocked_by_budget: 'blocked by budget',
};

export function* renderPlanChunks(doc: PlanDocument, ledger: LedgerNote): Generator<string> {
  const rows = doc.items.map((item) => [
    item.id,
    PLAN_WORDS[item.plan],
    item.estimate_usd === null ? '-' : `$${item.estimate_usd}`,
    cleanText(item.reason ?? ''),
  ]);
  const t = doc.totals;
  const toSubmit = t.new + t.changed + t.retry;
  const counts = (Object.keys(PLAN_WORDS) as PlanLabel[])
    .map((label) => `${t[label]} ${PLAN_WORDS[label]}`)
    .join(', ');
  const budget =
    t.budget_usd === null ? 'no budget_usd' : `budget left $${t.budget_left_usd} of $${t.budget_usd}`;
  const lines = [
    `${doc.manifest}: ${t.items} items: ${counts}`,
    `would submit ${toSubmit} item${toSubmit === 1 ? '' : 's'}, estimated ${t.estimate_usd === null ? 'unknown' : `$${t.estimate_usd}`}`,
    `spent so far $${t.spent_usd} net of refunds (refunded $${t.refunded_usd}), reserved $${t.reserved_usd}, ${budget}`,
  ];
  if (doc.account) {
    const a = doc.account;
    if (a.error) {
      lines.push(`account (${cleanText(a.base_url)}): GET /account failed: ${cleanText(a.error.message)}`);
    } else {
      lines.push(
        `account (${cleanText(a.base_url)}): wallet ${a.wallet_enabled ? 'enabled' : 'DISABLED'}, balance $${a.balance_usd}, concurrency ${a.concurrency?.active}/${a.concurrency?.limit} active`,
      );
    }
  } else {
    lines.push('account: not checked (pass --base-url or set MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY)');
  }
  yield* tableChunks(['ID', 'PLAN', 'ESTIMATE', 'REASON'], rows);
  yield `\n${lines.join('\n')}\n${footer(doc.warnings, ledger)}`;
}

// ---- report ----------------------------------------------------------------------------------

/** One attempt as the report shows it: never the whole idempotency key, never the request body. */
export interface AttemptRow {
  item_id: string;
  seq: number;
  key_prefix: string;
  job_id: string | null;
  status: string;
  cost_usd: string;
  refunded_usd: string;
  error: string | null;
  sent_at: string;
  completed_at: string | null;
}

/** Attempts in manifest order (unknown items last), then by attempt number. */
export function attemptHistory(
  attempts: readonly AttemptRecord[],
  order: ReadonlyMap<string, number>,
): AttemptRow[] {
  const rank = (itemId: string) => order.get(itemId) ?? Number.MAX_SAFE_INTEGER;
  return [...attempts]
    .sort((a, b) => rank(a.itemId) - rank(b.itemId) || a.itemId.localeCompare(b.itemId) || a.seq - b.seq)
    .map((attempt) => ({
      item_id: attempt.itemId,
      seq: attempt.seq,
      // A prefix tells attempts apart in logs; the whole key is not needed to read a report.
      key_prefix: attempt.idempotencyKey.slice(0, 8),
      job_id: attempt.jobId,
      status: attemptStatus(attempt),
      cost_usd: formatUsd(attemptSpentMicros(attempt)),
      refunded_usd: formatUsd(attempt.refundedMicros),
      error:
        attempt.errorCode === null ? null : cleanText(`${attempt.errorCode}: ${attempt.errorMessage ?? ''}`),
      sent_at: attempt.createdAt,
      completed_at: attempt.completedAt,
    }));
}

function attemptStatus(attempt: AttemptRecord): string {
  if (attempt.state === 'prepared') return 'sent, no answer yet';
  if (attempt.state === 'rejected') return `rejected (HTTP ${attempt.httpStatus ?? '?'})`;
  return attempt.jobStatus ?? 'accepted';
}

export function renderReportText(
  report: StatusReport,
  history: readonly AttemptRow[],
  ledger: LedgerNote,
  generatedAt: string,
): string {
  const rows = history.map((row) => [
    row.item_id,
    String(row.seq),
    `${row.key_prefix}…`,
    row.job_id === null ? '-' : cleanText(row.job_id),
    cleanText(row.status),
    `$${row.cost_usd}`,
    row.sent_at,
    row.error ?? '',
  ]);
  const head = `mediabatch report: ${report.manifest} (generated ${generatedAt})\n${countsLine(report)}\n${moneyLine(report.totals)}\n`;
  const attempts =
    rows.length === 0
      ? 'no attempts yet\n'
      : renderTable(['ITEM', '#', 'KEY', 'JOB', 'STATUS', 'COST', 'SENT', 'ERROR'], rows);
  return `${head}\nitems\n${statusTable(report)}\nattempts\n${attempts}\n${footer(report.warnings, ledger)}`;
}
