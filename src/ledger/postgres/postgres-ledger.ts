import type { NewAttempt } from '../attempt-writes.js';
import type {
  FileMove,
  ItemEntry,
  ItemExport,
  ItemSummary,
  ItemUpdate,
  PriceSample,
  SavedFileFacts,
} from '../ledger.js';
import type {
  AttemptRecord,
  BatchDump,
  FileRecord,
  ImportedJob,
  ItemRecord,
  JobSnapshot,
  KeeperChange,
  KeeperRecord,
  MoneyTotals,
  SavedTake,
  ServiceBinding,
} from '../records.js';
import type { ReusableTake, ReusedTake } from '../reused-take.js';
import { recordReused } from '../reused-take.js';
import type { SyncLedger } from '../sync-ledger.js';
import * as attempts from './pg-attempts.js';
import * as whole from './pg-batch-dump.js';
import { liveHosts, liveRuns, PgClaims } from './pg-claims.js';
import { PgDefinitions } from './pg-definitions.js';
import * as exportViews from './pg-export-views.js';
import * as views from './pg-item-views.js';
import * as rows from './pg-items-files.js';
import * as keeperRows from './pg-keepers.js';
import { PgLedgerConnection } from './pg-ledger-connection.js';
import type { PgConfig } from './sync-connection.js';

export interface PostgresLedgerOptions {
  now?: () => Date;
  readonly?: boolean;
  /** This runner's name among the batch's runners; a run passes one, a read-only command none. */
  runnerId?: string;
  /** How long a runner's lease lasts unrenewed (docs/shared-ledger.md). */
  leaseMs: number;
  /** How long a step waits for a database that stopped answering before the ledger is lost. */
  reconnectWithinMs: number;
}

/**
 * The ledger in a PostgreSQL database that several runners share (docs/shared-ledger.md). The
 * same contract as the SQLite one, plus leases (pg-claims.ts) and admission: attempts are
 * admitted under the batch's lock against the slots and budget of all its runners together.
 * Each step is its own transaction, committed before it returns; there is no group commit.
 */
export class PostgresLedger implements SyncLedger {
  readonly kind = 'postgres' as const;
  readonly shared = true;
  readonly path: string;
  readonly batchId: number;
  readonly claims: PgClaims | null;
  readonly definitions: PgDefinitions;
  readonly #c: PgLedgerConnection;
  readonly #leaseMs: number;

  private constructor(shown: string, c: PgLedgerConnection, claims: PgClaims | null, leaseMs: number) {
    this.path = shown;
    this.#c = c;
    this.#leaseMs = leaseMs;
    this.batchId = c.batchId;
    this.claims = claims;
    this.definitions = new PgDefinitions(c);
  }

  /** `shown` is the URL as people may see it: without its password. */
  static open(
    config: PgConfig,
    shown: string,
    batchName: string,
    manifestPath: string,
    options: PostgresLedgerOptions,
  ): PostgresLedger {
    const c = PgLedgerConnection.open(config, batchName, manifestPath, options);
    const claims = options.runnerId ? new PgClaims(c, options.runnerId, options.leaseMs) : null;
    return new PostgresLedger(shown, c, claims, options.leaseMs);
  }

  /** Runs of this batch, other than this one, whose heartbeat is younger than a lease. */
  liveRuns(): number {
    return liveRuns(this.#c, this.#leaseMs);
  }

  /** The machines this batch's live runners run on. */
  liveHosts(): string[] {
    return liveHosts(this.#c, this.#leaseMs);
  }

  /** Statements sent since opened (the bench's round trips). */
  get roundTrips(): number {
    return this.#c.db.roundTrips;
  }

  close(): void {
    this.#c.close();
  }

  atomically<T>(work: () => T): T {
    return this.#c.db.transaction(work);
  }

  groupCommits(_withinMs: number): void {
    // Every step commits at once: a shared ledger's readers are other runners, who must see it.
  }

  flush(): void {}

  listItems(): ItemRecord[] {
    return rows.listItems(this.#c);
  }

  putItems(items: ReadonlyArray<{ itemId: string } & ItemUpdate>): void {
    rows.putItems(this.#c, items, this.claims?.runnerId ?? null);
  }

  setItemState(itemId: string, update: ItemUpdate, event?: { kind: string; detail?: unknown }): void {
    rows.setItemState(this.#c, itemId, update, event);
  }

  renameItem(from: string, to: string, moves: readonly FileMove[]): void {
    rows.renameItem(this.#c, from, to, moves);
  }

  listAttempts(): AttemptRecord[] {
    return attempts.listAttempts(this.#c);
  }

  getAttempt(id: number): AttemptRecord {
    return attempts.getAttempt(this.#c, id);
  }

  attemptRequest(id: number): Pick<AttemptRecord, 'requestBody' | 'requestHash'> {
    return attempts.attemptRequest(this.#c, id);
  }

  hasAttempts(): boolean {
    return attempts.hasAttempts(this.#c);
  }

  prepareAttempt(attempt: NewAttempt): AttemptRecord {
    return this.prepareAttempts([attempt])[0]!;
  }

  prepareAttempts(list: readonly NewAttempt[]): AttemptRecord[] {
    return attempts.prepareAttempts(this.#c, list);
  }

  recordImportedJob(imported: ImportedJob): AttemptRecord {
    return attempts.recordImportedJob(this.#c, imported);
  }

  recordAccepted(attemptId: number, httpStatus: number | null, job: JobSnapshot): AttemptRecord {
    return attempts.recordAccepted(this.#c, attemptId, httpStatus, job);
  }

  recordRejected(attemptId: number, httpStatus: number, code: string | null, message: string): AttemptRecord {
    return attempts.recordRejected(this.#c, attemptId, httpStatus, code, message);
  }

  recordJobLost(attemptId: number, message: string): AttemptRecord {
    return attempts.recordJobLost(this.#c, attemptId, message);
  }

  recordJob(attemptId: number, job: JobSnapshot): AttemptRecord {
    return attempts.recordJob(this.#c, attemptId, job);
  }

  listFiles(): FileRecord[] {
    return rows.listFiles(this.#c);
  }

  savedFileTotals(): { bytes: number; outputs: number } {
    return rows.savedFileTotals(this.#c);
  }

  /** A saved take copied to an item whose request it answers: attempt, files and the item done, in one step. */
  recordReusedTake(reused: ReusedTake): AttemptRecord {
    return recordReused(this, reused, () => attempts.insertReusedAttempt(this.#c, reused));
  }

  reusableTakes(): ReusableTake[] {
    return keeperRows.reusableTakes(this.#c);
  }

  recordFilesSaved(attemptId: number, files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>): void {
    rows.recordFilesSaved(this.#c, attemptId, files);
  }

  recordFileMoved(attemptId: number, idx: number, path: string): void {
    rows.recordFileMoved(this.#c, attemptId, idx, path);
  }

  itemSummaries(): IterableIterator<ItemSummary> {
    return views.itemSummaries(this.#c);
  }

  itemEntries(): IterableIterator<ItemEntry> {
    return views.itemEntries(this.#c);
  }

  itemExports(ids: readonly string[]): IterableIterator<ItemExport> {
    return exportViews.itemExports(this.#c, ids);
  }

  paidItemsNotIn(ids: readonly string[]): string[] {
    return exportViews.paidItemsNotIn(this.#c, ids);
  }

  priceSamples(): PriceSample[] {
    return exportViews.priceSamples(this.#c);
  }

  unsavedSucceeded(): AttemptRecord[] {
    return attempts.unsavedSucceeded(this.#c);
  }

  wroteFile(path: string): boolean {
    return rows.wroteFile(this.#c, path);
  }

  savedFileFacts(): IterableIterator<SavedFileFacts> {
    return views.savedFileFacts(this.#c);
  }

  savedAt(attemptId: number): string | null {
    return rows.savedAt(this.#c, attemptId);
  }

  itemFilePaths(): IterableIterator<[string, string]> {
    return rows.itemFilePaths(this.#c);
  }

  keepers(): KeeperRecord[] {
    return keeperRows.keepers(this.#c);
  }

  savedTakes(): SavedTake[] {
    return keeperRows.savedTakes(this.#c);
  }

  hasLaterTakes(): boolean {
    return keeperRows.hasLaterTakes(this.#c);
  }

  setKeepers(changes: readonly KeeperChange[]): void {
    keeperRows.setKeepers(this.#c, changes);
  }

  service(): ServiceBinding | null {
    return rows.boundService(this.#c);
  }

  bindService(identity: string): ServiceBinding {
    return rows.bindService(this.#c, identity);
  }

  moneyTotals(): MoneyTotals {
    return attempts.moneyTotals(this.#c);
  }

  startRun(pid: number): number {
    const runId = rows.startRun(this.#c, pid, this.claims?.runnerId ?? null);
    this.claims?.runStarted(runId);
    return runId;
  }

  endRun(runId: number, exitCode: number): void {
    this.claims?.release();
    rows.endRun(this.#c, runId, exitCode);
  }

  lastRun(): { pid: number; startedAt: string } | null {
    return rows.lastRun(this.#c);
  }

  appendEvent(itemId: string | null, attemptId: number | null, kind: string, detail?: unknown): void {
    rows.appendEvent(this.#c, itemId, attemptId, kind, detail ?? null);
  }

  dumpBatch(): BatchDump {
    return whole.dumpBatch(this.#c);
  }

  loadBatch(dump: BatchDump): void {
    whole.loadBatch(this.#c, dump);
  }
}
