/**
 * mediabatch as a library: the package root's whole public surface (docs/api.md). The CLI is a
 * client of the same functions; everything not exported here is private.
 */
export { ExitCode, UserError } from './errors.js';
export type { ImportSummary } from './import/render.js';
export type { ItemState } from './ledger/records.js';
export { type ExportOptions, exportItems, type ImportOptions, importJobs } from './public/ledger-tasks.js';
export type { LedgerOptions, ServiceOptions } from './public/options.js';
export { OptionError } from './public/options.js';
export { loadManifest, ManifestError, type ManifestSource, plan, status } from './public/read.js';
export {
  type ItemEvent,
  type LogEvent,
  type RunEvents,
  RunHandle,
  type RunOptions,
  type RunResult,
  run,
  type StopEvent,
} from './public/run.js';
export {
  demoSandboxConfig,
  type SandboxConfigInput,
  type SandboxHandle,
  startSandbox,
} from './batch/embedded-sandbox.js';
export { LedgerHeldError } from './batch/ledger-access.js';
export type { StatusDocument } from './public/status-document.js';
export type { Manifest, ManifestItem, ManifestProblem } from './manifest/index.js';
export type { ExportRecord } from './report/export-records.js';
export type { PlanDocument } from './report/plan-report.js';
export type { ProgressSnapshot } from './runner/reporter.js';
export type { StopReason } from './runner/stop-rules.js';
