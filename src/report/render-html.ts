import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type AttemptRow, cleanText, type LedgerNote } from './render-text.js';
import type { StatusItem, StatusReport } from './status-report.js';

/**
 * A self-contained HTML page (inline style, no script, no external asset) that can be mailed or
 * archived beside the outputs. Every value is escaped: prompts, ids and service messages are
 * untrusted text as far as a browser is concerned.
 */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/** Escaped, cleaned text for a cell. */
const h = (text: string | number | null | undefined): string =>
  text === null || text === undefined ? '' : escapeHtml(cleanText(String(text)));

export interface HtmlReportOptions {
  /** Absolute path the page is written to: links to outputs are relative to its folder. */
  htmlPath: string;
  /** Folder the report's file paths are relative to (the manifest's). */
  baseDir: string;
  ledger: LedgerNote;
  generatedAt: string;
  /** Prompt per item id, shown so the page explains itself. */
  prompts: ReadonlyMap<string, string>;
}

/** A link that keeps working when the page and the outputs are moved together. */
export function fileHref(file: string, baseDir: string, htmlPath: string): string {
  const target = resolve(baseDir, file);
  const rel = relative(dirname(htmlPath), target);
  if (isAbsolute(rel)) return pathToFileURL(target).href; // another drive: no relative path exists
  return rel.split(sep).map(encodeURIComponent).join('/');
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.money{text-align:right;font-family:monospace}code{font-family:monospace}
.state-done{color:#176b2c}.state-failed,.state-expired,.state-budget_exceeded{color:#a11}.state-in_flight,.state-pending{color:#8a5a00}
.warning{background:#fff4d6;border:1px solid #e0b84c;padding:.4em .8em;margin:.3em 0}.prompt{color:#555;max-width:40em}`;

function itemRow(item: StatusItem, options: HtmlReportOptions): string {
  const files = item.files
    .map(
      (file) => `<a href="${escapeHtml(fileHref(file, options.baseDir, options.htmlPath))}">${h(file)}</a>`,
    )
    .join('<br>');
  const error = item.error ? `<code>${h(item.error.code)}</code>: ${h(item.error.message)}` : '';
  return `<tr id="item-${h(item.id)}"><td><code>${h(item.id)}</code></td><td class="state-${h(item.state)}">${h(item.state.replace(/_/g, ' '))}</td><td>${item.attempts}</td><td class="money">$${h(item.cost_usd)}</td><td><code>${h(item.job_id ?? '')}</code></td><td>${files}${error}</td><td class="prompt">${h(options.prompts.get(item.id))}</td></tr>`;
}

function attemptRow(row: AttemptRow): string {
  return `<tr><td><a href="#item-${h(row.item_id)}"><code>${h(row.item_id)}</code></a></td><td>${row.seq}</td><td><code>${h(row.key_prefix)}…</code></td><td><code>${h(row.job_id ?? '')}</code></td><td>${h(row.status)}</td><td class="money">$${h(row.cost_usd)}</td><td class="money">$${h(row.refunded_usd)}</td><td>${h(row.sent_at)}</td><td>${h(row.completed_at)}</td><td>${h(row.error)}</td></tr>`;
}

export function renderHtmlReport(
  report: StatusReport,
  history: readonly AttemptRow[],
  options: HtmlReportOptions,
): string {
  const t = report.totals;
  const summary: Array<[string, string | number | null]> = [
    ['items', t.items],
    ['done', t.done],
    ['failed', t.failed],
    ['budget exceeded', t.budget_exceeded],
    ['expired', t.expired],
    ['in flight', t.in_flight],
    ['pending', t.pending],
    ['spent (net of refunds)', `$${t.spent_usd}`],
    ['charged', `$${t.charged_usd}`],
    ['refunded', `$${t.refunded_usd}`],
    ['reserved', `$${t.reserved_usd}`],
    ['budget', t.budget_usd === null ? 'none' : `$${t.budget_usd}`],
    ['budget left', t.budget_left_usd === null ? '-' : `$${t.budget_left_usd}`],
  ];
  const parts = [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // No network at all from this page: nothing it shows needs one.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>mediabatch report: ${h(report.manifest)}</title><style>${STYLE}</style></head><body>`,
    `<h1>mediabatch report: <code>${h(report.manifest)}</code></h1>`,
    `<p>Generated ${h(options.generatedAt)}. ${h(options.ledger.exists ? `Ledger: ${options.ledger.path}` : `No ledger yet at ${options.ledger.path}: nothing has run.`)}</p>`,
    ...report.warnings.map((warning) => `<p class="warning">${h(warning)}</p>`),
    '<h2>Totals</h2><table>',
    ...summary.map(([label, value]) => `<tr><th>${h(label)}</th><td>${h(value)}</td></tr>`),
    '</table><h2>Items</h2><table><thead><tr><th>Item</th><th>State</th><th>Attempts</th><th>Cost</th><th>Job</th><th>Files / error</th><th>Prompt</th></tr></thead><tbody>',
    ...report.items.map((item) => itemRow(item, options)),
    '</tbody></table><h2>Attempts</h2>',
    history.length === 0
      ? '<p>No attempts yet.</p>'
      : '<table><thead><tr><th>Item</th><th>#</th><th>Key</th><th>Job</th><th>Status</th><th>Cost</th><th>Refunded</th><th>Sent</th><th>Completed</th><th>Error</th></tr></thead><tbody>',
    ...history.map(attemptRow),
    history.length === 0 ? '' : '</tbody></table>',
    '</body></html>',
    '',
  ];
  return parts.join('\n');
}
