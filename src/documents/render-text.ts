import { type AttemptRecord, attemptSpentMicros, describeService } from '../ledger/index.js';
import { formatUsd, humanUsd } from '../money.js';
import { cleanText } from './clean-text.js';
import { fileProblemLines } from './file-problems.js';
import type { KeeperOutsideManifest } from './kept-records.js';
import { onRequestLines } from './on-request.js';
import { rejectedLines } from './rejected-records.js';
import type { StatusItem } from './status-line.js';
import type { StatusReport } from './status-report.js';
import { type ValueAtRisk, valueAtRiskText } from './value-at-risk.js';

/**
 * Plain-text tables for people. Everything shown comes from the ledger or the service, so every
 * cell is cleaned first: a job error message must not be able to move the terminal's cursor or
 * leak a signed URL's query string (its signature) into a log.
 */

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

/** The same table a thousand lines at a time, so that 100,000 rows never become one string. */
export function* tableChunks(
  headers: readonly string[],
  /** Read twice (the widths, then the lines): an array, or rows made afresh from a spool each time. */
  rows: Iterable<readonly string[]>,
  maxWidth = 48,
): Generator<string> {
  const widths = headers.map((header) => header.length);
  for (const row of rows) {
    for (let i = 0; i < row.length - 1; i++) {
      const length = row[i]!.length;
      if (length > widths[i]! && length <= maxWidth) widths[i] = length;
    }
  }
  // Concatenated, not mapped and joined: this runs once per row, 100,000 times for a big batch.
  const line = (cells: readonly string[]) => {
    let text = '';
    for (let i = 0; i < cells.length - 1; i++) text += `${cells[i]!.padEnd(widths[i]!)}  `;
    return `${text}${cells[cells.length - 1] ?? ''}`.trimEnd();
  };
  yield `${line(headers)}\n`;
  let out: string[] = [];
  for (const row of rows) {
    out.push(line(row));
    if (out.length < LINES_PER_CHUNK) continue;
    yield `${out.join('\n')}\n`;
    out = [];
  }
  if (out.length > 0) yield `${out.join('\n')}\n`;
}

const LINES_PER_CHUNK = 1000;

export interface LedgerNote {
  path: string;
  exists: boolean;
  /** The service the ledger belongs to; null while none has answered a run. */
  service?: string | null;
}

export function ledgerLine(ledger: LedgerNote): string {
  return ledger.exists
    ? `ledger: ${ledger.path}\n${serviceLine(ledger)}`
    : `ledger: ${ledger.path} (not created yet: nothing has run)`;
}

/** Which service the ledger's items, jobs and spend belong to (docs/services.md). */
function serviceLine(ledger: LedgerNote): string {
  return ledger.service
    ? `service: ${cleanText(describeService(ledger.service, '--sandbox'))}`
    : 'service: none yet (bound when a run first reaches a service)';
}

const words = (state: string) => state.replace(/_/g, ' ');

/**
 * humanUsd for many rows: a 100,000-item table holds a handful of distinct amounts, and parsing
 * and formatting every cell again costs about 70 ms.
 */
export function humanUsdCached(): (decimal: string | null) => string {
  const seen = new Map<string | null, string>();
  return (decimal) => {
    let shown = seen.get(decimal);
    if (shown === undefined) {
      shown = humanUsd(decimal);
      seen.set(decimal, shown);
    }
    return shown;
  };
}

function filesOrError(item: StatusItem): string {
  if (item.error) return cleanText(`${item.error.code}: ${item.error.message}`);
  if (item.takes) {
    // Newest first, as the gallery shows them.
    return item.takes.map((take) => `take ${take.take}: ${take.files.map(cleanText).join(', ')}`).join('; ');
  }
  return item.files.map(cleanText).join(', ');
}

export function moneyLine(totals: StatusReport['totals']): string {
  const budget =
    totals.budget_usd === null
      ? 'no budget_usd'
      : `budget left ${humanUsd(totals.budget_left_usd)} of ${humanUsd(totals.budget_usd)}`;
  return `spent ${humanUsd(totals.spent_usd)} net (charged ${humanUsd(totals.charged_usd)}, refunded ${humanUsd(totals.refunded_usd)}), reserved ${humanUsd(totals.reserved_usd)}, ${budget}`;
}

/** Items with variants still to choose from, as a line of its own (none: nothing). */
export function keeperLine(ids: readonly string[] | undefined): string {
  const n = ids?.length ?? 0;
  if (n === 0) return '';
  return `${n} item${n === 1 ? '' : 's'} with variants ${n === 1 ? 'has' : 'have'} no keeper yet: mediabatch keep (docs/gallery.md)\n`;
}

const OUTSIDE_WHY: Record<KeeperOutsideManifest['why'], (variant: number) => string> = {
  variant_not_asked: (variant) =>
    `the manifest asks for fewer than ${variant} variants now; raising them keeps it again`,
  item_not_asked: () => 'the item left the manifest; putting it back keeps it again',
};

/** Keepers the manifest no longer asks for, one line each (none: nothing). */
export function outsideKeeperLines(keepers: readonly KeeperOutsideManifest[] | undefined): string {
  const n = keepers?.length ?? 0;
  if (n === 0) return '';
  const lines = keepers!.map(
    (k) =>
      `  ${k.id}: ${k.item} take ${k.take}, ${k.paths.join(', ') || 'no saved file'} (${OUTSIDE_WHY[k.why](k.variant)})`,
  );
  return `${n} keeper${n === 1 ? '' : 's'} outside the manifest, still on record (mediabatch export --kept writes ${n === 1 ? 'it' : 'them'} with in_manifest false):\n${lines.join('\n')}\n`;
}

export function countsLine(report: Pick<ShownStatus, 'manifest' | 'totals'>): string {
  const t = report.totals;
  return `${report.manifest}: ${t.items} items: ${t.done} done, ${t.failed} failed, ${t.budget_exceeded} budget exceeded, ${t.expired} expired, ${t.in_flight} in flight, ${t.pending} pending`;
}

/** A status report, its items held whole or read back from a spool each time (spooled-items.ts). */
type ShownStatus = StatusReport<Iterable<StatusItem>>;

function statusTable(report: ShownStatus): Generator<string> {
  const usd = humanUsdCached();
  // A manifest of templates shows each prompt as rendered: the ids alone no longer say it.
  let prompts = false;
  for (const item of report.items) if (item.prompt !== undefined) prompts = true;
  const rows = {
    *[Symbol.iterator]() {
      for (const item of report.items)
        yield [
          item.id,
          words(item.state),
          String(item.attempts),
          usd(item.cost_usd),
          item.job_id === null ? '-' : cleanText(item.job_id),
          ...(prompts ? [cleanText(item.prompt ?? '')] : []),
          filesOrError(item),
        ];
    },
  };
  const head = ['ID', 'STATE', 'ATTEMPTS', 'COST', 'JOB', ...(prompts ? ['PROMPT'] : []), 'FILES / ERROR'];
  return tableChunks(head, rows);
}

/** Saved files not as saved, a line each, after a blank line; '' when there are none. */
export function savedFileLines(
  doc: {
    items: Parameters<typeof fileProblemLines>[0];
    totals: Parameters<typeof fileProblemLines>[1];
    file_check: 'stat' | 'sha256' | null;
  },
  listed?: number,
): string {
  const lines = fileProblemLines(doc.items, doc.totals, doc.file_check === 'sha256', listed);
  return lines.length === 0 ? '' : `\n${lines.map(cleanText).join('\n')}\n`;
}

/** The items only an option of run pays for again, a line per option after a blank line; '' when none. */
function onRequestText(items: ShownStatus['items']): string {
  const lines = onRequestLines(items);
  return lines.length === 0 ? '' : `\n${lines.map(cleanText).join('\n')}\n`;
}

export function footer(warnings: readonly string[], ledger: LedgerNote): string {
  const lines = warnings.map((warning) => `warning: ${cleanText(warning)}`);
  lines.push(ledgerLine(ledger));
  return `${lines.join('\n')}\n`;
}

/**
 * The value-at-risk sentence where it belongs: first of all when the earliest output expires
 * within six hours (`first`), else after the money. Empty when nothing is at risk.
 */
export function riskLines(risk: ValueAtRisk, saveCommand: string, first: boolean): string {
  const text = risk.urgent === first ? valueAtRiskText(risk, saveCommand) : null;
  return text === null ? '' : `${cleanText(text)}\n${first ? '\n' : ''}`;
}

/**
 * `status` for people, in chunks for writeChunks; `saveCommand` is the run that saves outputs at
 * risk, `sandboxCommand` the status that reads the sandbox's ledger when only that one exists.
 */
export function* statusTextChunks(
  report: ShownStatus,
  ledger: LedgerNote & { sandboxLedger?: string },
  saveCommand = 'mediabatch run',
  sandboxCommand = 'mediabatch status --sandbox',
): Generator<string> {
  yield riskLines(report.value_at_risk, saveCommand, true);
  yield* statusTable(report);
  yield savedFileLines(report);
  yield onRequestText(report.items);
  yield `\n${countsLine(report)}\n${moneyLine(report.totals)}\n${riskLines(report.value_at_risk, saveCommand, false)}${keeperLine(report.without_keeper)}${rejectedLines(report.rejected)}${outsideKeeperLines(report.keepers_outside_manifest)}${footer(report.warnings, ledger)}`;
  if (ledger.sandboxLedger)
    yield `a sandbox run of ${report.manifest} keeps its ledger at ${ledger.sandboxLedger}: add --sandbox to read it (${sandboxCommand})\n`;
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

/** What a row of the attempts table reads of an attempt: never its request. */
export type HistoryAttempt = Pick<
  AttemptRecord,
  | 'itemId'
  | 'seq'
  | 'idempotencyKey'
  | 'jobId'
  | 'state'
  | 'httpStatus'
  | 'jobStatus'
  | 'amountMicros'
  | 'refundedMicros'
  | 'errorCode'
  | 'errorMessage'
  | 'createdAt'
  | 'completedAt'
>;

/** Attempts in manifest order (unknown items last), then by attempt number. */
export function attemptHistory(
  attempts: readonly HistoryAttempt[],
  order: ReadonlyMap<string, number>,
): AttemptRow[] {
  const rank = (itemId: string) => order.get(itemId) ?? Number.MAX_SAFE_INTEGER;
  return [...attempts].sort((a, b) => rank(a.itemId) - rank(b.itemId) || historyOrder(a, b)).map(attemptRow);
}

/** The table's order among attempts of one item, or of items the manifest does not list. */
export const historyOrder = (a: HistoryAttempt, b: HistoryAttempt): number =>
  a.itemId.localeCompare(b.itemId) || a.seq - b.seq;

export function attemptRow(attempt: HistoryAttempt): AttemptRow {
  return {
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
  };
}

function attemptStatus(attempt: HistoryAttempt): string {
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
    humanUsd(row.cost_usd),
    row.sent_at,
    row.error ?? '',
  ]);
  const head = `mediabatch report: ${report.manifest} (generated ${generatedAt})\n${countsLine(report)}\n${moneyLine(report.totals)}\n`;
  const attempts =
    rows.length === 0
      ? 'no attempts yet\n'
      : renderTable(['ITEM', '#', 'KEY', 'JOB', 'STATUS', 'COST', 'SENT', 'ERROR'], rows);
  return `${head}\nitems\n${[...statusTable(report)].join('')}\nattempts\n${attempts}\n${footer(report.warnings, ledger)}`;
}
