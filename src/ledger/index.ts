export { ledgerFileMissing } from './dialect/ledger-file.js';
export { isLedgerReadError } from './dialect/read-errors.js';
export type {
  Admission,
  Admitted,
  BatchJob,
  CopyLedger,
  FailedTakes,
  FileMove,
  ItemEntry,
  ItemExport,
  ItemSummary,
  ItemUpdate,
  JobView,
  Ledger,
  LedgerLifecycle,
  NewAttempt,
  PriceSample,
  ReadingLedger,
  RecordReads,
  RunLedger,
  RunnerClaims,
  SavedFileFacts,
  SharedLedger,
  ShownCheck,
  StoredDefinition,
  TakeCheckInput,
  TakeLedger,
} from './ledger.js';
export { acquireLedgerLock, type LedgerLock } from './lock.js';
export { SCHEMA_VERSION } from './migrations.js';
export { attemptSpentMicros, budgetLeftMicros, moneyTotalsOf, spentMicros } from './money-totals.js';
export * from './open-ledger.js';
export * from './records.js';
export type { ResultOfCopy } from './result-record.js';
export type { ReusableTake, TakeToFetch } from './reused-take.js';
export { describeService, SANDBOX_IDENTITY } from './service.js';
export { shownCheck } from './take-checks.js';
