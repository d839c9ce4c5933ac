/**
 * mediabatch as a library: the package root's whole public surface (docs/api.md). The CLI is a
 * client of these functions, as any program is; everything not exported here is private.
 */

export { LedgerHeldError } from './batch/ledger-access.js';
export {
  NOTICE_CODES,
  type Notice,
  type NoticeCode,
  WARNING_CODES,
  type Warning,
  type WarningCode,
} from './batch/warnings.js';
export { ENVIRONMENT } from './environment.js';
export { ERROR_CODES, type ErrorCode, ExitCode, exitCodeRows, type Fields, UserError } from './errors.js';
export type { ImportSummary } from './import/render.js';
export type { ItemState } from './ledger/records.js';
export type { ItemVariant, Manifest, ManifestItem, ManifestProblem } from './manifest/index.js';
export {
  type ApprovedItem,
  type ApprovedPlan,
  type WritePlanOptions,
  type WrittenPlan,
  writePlan,
} from './public/approved-plan.js';
export {
  type AuditDocument,
  type AuditOptions,
  type AuditProblemEntry,
  type AuditProblemKind,
  audit,
} from './public/audit.js';
export { type KeepOptions, type KeepResult, keepTakes } from './public/keep.js';
export {
  type CopyLedgerOptions,
  copyLedger,
  type ForgetOptions,
  type ForgottenJob,
  forgetJobs,
  type ImportOptions,
  importJobs,
  type LedgerCopy,
} from './public/ledger-tasks.js';
export { type DefinitionOptions, loadDefinition } from './public/load-definition.js';
export {
  EXPORT_STATES,
  type ExportOptions,
  type LedgerOptions,
  OptionError,
  type PlanDocument,
  type PlanOptions,
  type ServiceOptions,
  type StatusOptions,
} from './public/options.js';
export {
  exportItems,
  exportKept,
  exportRecords,
  type KeptExport,
  loadManifest,
  ManifestError,
  type ManifestSource,
  plan,
  status,
  writeExport,
} from './public/read.js';
export {
  type BatchReport,
  type GalleryOptions,
  type GalleryWritten,
  report,
  writeGallery,
} from './public/report.js';
export {
  type ItemEvent,
  type LogEvent,
  type RunEvents,
  RunHandle,
  type RunOptions,
  type RunResult,
  run,
  type SandboxEvent,
  type StartEvent,
  type StopEvent,
} from './public/run.js';
export type { StatusDocument } from './public/status-document.js';
export type { EarlierTake, ExportRecord, ExportState } from './report/export-records.js';
export type { KeeperOutsideManifest, KeptFileProblem, KeptRecord } from './report/kept-records.js';
export { NO_ANSWER_IN_TIME } from './report/plan-account.js';
export type { ProgressSnapshot } from './runner/reporter.js';
export type { StopReason } from './runner/stop-rules.js';
export {
  demoSandboxConfig,
  loadSandboxConfig,
  type SandboxConfigInput,
  type SandboxHandle,
  startSandbox,
} from './sandbox/index.js';
