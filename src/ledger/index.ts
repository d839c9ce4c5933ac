export { isLedgerReadError } from './dialect/read-errors.js';
export type { Admission, Admitted, ItemUpdate, Ledger, NewAttempt, RunnerClaims } from './ledger.js';
export { acquireLedgerLock, type LedgerLock } from './lock.js';
export { SCHEMA_VERSION } from './migrations.js';
export * from './open-ledger.js';
export * from './records.js';
export { describeService, SANDBOX_IDENTITY } from './service.js';
