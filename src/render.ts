/**
 * mediabatch/render: the package's second entry point. The library's documents (a plan, a status,
 * an export, an audit, what `import`, `keep`, `forget`, `copy-ledger` and `report --html` did)
 * rendered as people read them: the text and JSON `mediabatch` prints, the records `export`
 * writes. The CLI renders through this entry point alone, as a program would (docs/api.md).
 */

export { accountFailure } from './batch/plan/plan-account.js';
export { renderAuditText } from './commands/audit/audit-report.js';
export { renderImportText } from './commands/import/render-import.js';
export { planSummaryChunks, planTextChunks } from './commands/plan/render-plan.js';
export { type ExportFormat, exportChunks } from './documents/export-records.js';
export { jsonChunks, jsonStream, Later } from './documents/json-chunks.js';
export { keptChunks, keptExportNotes } from './documents/kept-records.js';
export { type RejectedRecord, rejectedYaml } from './documents/rejected-records.js';
export {
  renderCopied,
  renderForgotten,
  renderGalleryWritten,
  renderKept,
  renderRunGallery,
} from './documents/render-tasks.js';
export { renderReportText, statusTextChunks } from './documents/render-text.js';
export type { StatusReport } from './documents/status-report.js';
export { SUMMARY_ABOVE, statusSummaryChunks, wantsSummary } from './documents/summary-text.js';
// The budget's words a run's views show.
export { afterBudgetStopWords, notFittingLine, unspecifiedShortfallWords } from './runner/budget-words.js';
