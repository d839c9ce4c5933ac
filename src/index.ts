/**
 * mediabatch as a library: the package root's whole public surface (docs/api.md). The CLI is a
 * client of these functions, as any program is; everything not exported here is private.
 */

export { type DefinitionOptions, loadDefinition } from './batch/definition/load-definition.js';
export type { StatusDocument } from './batch/ledger/status-document.js';
export { NO_ANSWER_IN_TIME } from './batch/plan/plan-account.js';
export { loadManifest, type ManifestSource, manifestItems } from './batch/resolve/load-manifest.js';
export type { LedgerOptions, ServiceOptions } from './batch/resolve/options.js';
export { openManifest, type StreamedManifest } from './batch/resolve/streamed-manifest.js';
export {
  NOTICE_CODES,
  type Notice,
  type NoticeCode,
  WARNING_CODES,
  type Warning,
  type WarningCode,
} from './batch/resolve/warnings.js';
export {
  COMMAND_OUTCOMES,
  type CommandOutcome,
  ERROR_CODES,
  type ErrorCode,
  OUTCOMES,
  type Outcome,
} from './codes.js';
export {
  type AuditDocument,
  type AuditOptions,
  type AuditProblemEntry,
  type AuditProblemKind,
  audit,
} from './commands/audit/audit.js';
export {
  type CheckOptions,
  type ChecksDocument,
  checkTakes,
  type TakeChecked,
} from './commands/check/check.js';
export { type CopyLedgerOptions, copyLedger, type LedgerCopy } from './commands/copy-ledger/copy-ledger.js';
export {
  EXPORT_STATES,
  type ExportOptions,
  exportItems,
  exportKept,
  exportRecords,
  exportRejected,
  type KeptExport,
  type RejectedExport,
  writeExport,
} from './commands/export/export.js';
export {
  type ForgetOptions,
  type ForgottenJob,
  forgetJobs,
  forgetOutcome,
} from './commands/forget/forget.js';
export { type ImportOptions, importJobs } from './commands/import/import.js';
export type { ImportSummary } from './commands/import/render-import.js';
export { type KeepOptions, type KeepResult, keepTakes } from './commands/keep/keep.js';
export {
  type PlanDocument,
  type PlanOptions,
  plan,
  type StreamedPlanDocument,
  streamPlan,
} from './commands/plan/plan.js';
export {
  type ApprovedItem,
  type ApprovedPlan,
  type WritePlanOptions,
  type WrittenPlan,
  writePlan,
} from './commands/plan/write-plan.js';
export {
  type BatchReport,
  type GalleryOptions,
  type GalleryWritten,
  report,
  writeGallery,
} from './commands/report/report.js';
export {
  type ItemEvent,
  type LogEvent,
  type RunEvent,
  type RunEvents,
  RunHandle,
  type RunOptions,
  type RunResult,
  run,
  type SandboxEvent,
  type StartEvent,
  type StopEvent,
} from './commands/run/run.js';
export { type StatusOptions, status, streamStatus } from './commands/status/status.js';
export type { EarlierTake, ExportRecord, ExportState } from './documents/export-records.js';
export type { KeeperOutsideManifest, KeptFileProblem, KeptRecord } from './documents/kept-records.js';
export type { SpooledItems } from './documents/spooled-items.js';
export type { StatusItem } from './documents/status-line.js';
export { ENVIRONMENT } from './environment.js';
export {
  ApiConnectionError,
  ApiError,
  type ApiErrorFields,
  AuthenticationError,
  BadRequestError,
  BillingError,
  ConflictError,
  DatabaseError,
  DatabaseLostError,
  type Fields,
  InternalServerError,
  LedgerHeldError,
  LedgerLostError,
  ManifestError,
  MediabatchError,
  NotFoundError,
  type NothingWas,
  OptionError,
  RateLimitError,
  UserError,
} from './errors.js';
export {
  ExitCode,
  errorExitRows,
  exitCodeOfError,
  exitCodeOfOutcome,
  exitCodeRows,
} from './exit-codes.js';
export type { ItemState } from './ledger/index.js';
export type { ItemVariant, Manifest, ManifestItem, ManifestProblem } from './manifest/index.js';
export type { CheckedFile, CheckFunction, CheckVerdict } from './runner/own-checks.js';
export type { ProgressSnapshot } from './runner/run-observer.js';
export type { StopReason } from './runner/stop-rules.js';
export {
  demoSandboxConfig,
  loadSandboxConfig,
  type SandboxConfigInput,
  type SandboxHandle,
  type SandboxProblem,
  startSandbox,
} from './sandbox/index.js';
