import {
  attemptRequest,
  getAttempt,
  hasAttempts,
  listAttempts,
  moneyTotals,
  unsavedSucceeded,
} from './attempt-reads.js';
import {
  insertReusedAttempt,
  type NewAttempt,
  prepareAttempts,
  recordAccepted,
  recordImportedJob,
  recordJob,
  recordJobLost,
  recordRejected,
} from './attempt-writes.js';
import { dumpBatch, loadBatch } from './batch-dump.js';
import {
  itemFilePaths,
  listFiles,
  recordFileMoved,
  recordFilesSaved,
  savedFileTotals,
  wroteFile,
} from './file-rows.js';
import { type ItemEntry, itemEntries } from './item-entries.js';
import { type ItemExport, itemExports, paidItemsNotIn } from './item-exports.js';
import { type FileMove, renameItem } from './item-rename.js';
import { type ItemUpdate, listItems, putItems, setItemState } from './item-rows.js';
import { type ItemSummary, itemSummaries } from './item-summaries.js';
import { hasLaterTakes, keepers, reusableTakes, savedTakes, setKeepers } from './keeper-rows.js';
import { LedgerConnection, type OpenOptions } from './ledger-connection.js';
import { type PriceSample, priceSamples } from './price-samples.js';
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
} from './records.js';
import type { ReusableTake, ReusedTake } from './reused-take.js';
import { recordReused } from './reused-take.js';
import { appendEvent, endRun, lastRun, startRun } from './runs-and-events.js';
import { type SavedFileFacts, savedAtOf, savedFileFacts } from './saved-files.js';
import { bindService, boundService } from './service-binding.js';
import type { SyncLedger } from './sync-ledger.js';

/**
 * The ledger in one SQLite file (better-sqlite3), held by one run at a time (lock.ts). Each group
 * of queries lives in its own module (item-rows, attempt-reads, attempt-writes, file-rows,
 * runs-and-events, service-binding), all working through one LedgerConnection (pragmas, compiled
 * statements, group commit).
 */
export class SqliteLedger implements SyncLedger {
  readonly kind = 'sqlite' as const;
  readonly shared = false;
  readonly claims = null;
  // The manifest file is the definition of a batch one run holds at a time.
  readonly definitions = null;
  readonly path: string;
  readonly batchId: number;
  readonly #c: LedgerConnection;

  private constructor(path: string, connection: LedgerConnection) {
    this.path = path;
    this.#c = connection;
    this.batchId = connection.batchId;
  }

  /** Opens (creating with mode 0600 when new) and migrates the ledger, and finds or adds the batch. */
  static open(
    path: string,
    batchName: string,
    manifestPath: string,
    options: OpenOptions = {},
  ): SqliteLedger {
    return new SqliteLedger(path, LedgerConnection.open(path, batchName, manifestPath, options));
  }

  close(): void {
    this.#c.close();
  }

  /**
   * Runs `work` as one transaction: the ledger steps inside it commit together, with one disk sync
   * (synchronous=FULL) instead of one each, and a failure leaves none of them.
   */
  atomically<T>(work: () => T): T {
    return this.#c.write(work);
  }

  /**
   * Group commit (docs/performance.md): from now on, steps that a re-run can redo safely (answers,
   * job states, saved files, item states) join one open transaction, committed with one disk sync
   * at most `withinMs` later, or at once by the next write-ahead step. prepareAttempt alone is
   * committed before it returns: an attempt's key and body are durable before its POST.
   */
  groupCommits(withinMs: number): void {
    this.#c.groupCommits(withinMs);
  }

  /** Commits the open group, if any. */
  flush(): void {
    this.#c.flush();
  }

  /** The durability settings in force on this connection (synchronous 2 is FULL). */
  settings(): { journalMode: string; synchronous: number } {
    return {
      journalMode: this.#c.db.pragma('journal_mode', { simple: true }) as string,
      synchronous: this.#c.db.pragma('synchronous', { simple: true }) as number,
    };
  }

  integrityCheck(): string {
    return this.#c.db.pragma('integrity_check', { simple: true }) as string;
  }

  // ---- items (item-rows.ts) ----------------------------------------------------------------

  listItems(): ItemRecord[] {
    return listItems(this.#c);
  }

  /** Inserts or rewrites many items at once (manifest sync); one transaction for all of them. */
  putItems(items: ReadonlyArray<{ itemId: string } & ItemUpdate>): void {
    putItems(this.#c, items);
  }

  setItemState(itemId: string, update: ItemUpdate, event?: { kind: string; detail?: unknown }): void {
    setItemState(this.#c, itemId, update, event);
  }

  /**
   * An item renamed with its request unchanged: its row, attempts and files follow the new id in
   * one step, with a `renamed` event (item-rename.ts).
   */
  renameItem(from: string, to: string, moves: readonly FileMove[]): void {
    renameItem(this.#c, from, to, moves);
  }

  // ---- attempts (attempt-reads.ts, attempt-writes.ts) --------------------------------------

  /** Every attempt of the batch, whole, in id order. */
  listAttempts(): AttemptRecord[] {
    return listAttempts(this.#c);
  }

  getAttempt(id: number): AttemptRecord {
    return getAttempt(this.#c, id);
  }

  /** An attempt's request body and hash alone (plan's read for an item whose hash differs). */
  attemptRequest(id: number): Pick<AttemptRecord, 'requestBody' | 'requestHash'> {
    return attemptRequest(this.#c, id);
  }

  /** False for a new ledger (or one whose runs never got as far as preparing a request). */
  hasAttempts(): boolean {
    return hasAttempts(this.#c);
  }

  /** Write-ahead: the key, exact body and reservation are durable before the POST is sent. */
  prepareAttempt(attempt: NewAttempt): AttemptRecord {
    return prepareAttempts(this.#c, [attempt])[0]!;
  }

  /** Several attempts made durable together, with one disk sync: each before its own POST. */
  prepareAttempts(attempts: readonly NewAttempt[]): AttemptRecord[] {
    return prepareAttempts(this.#c, attempts);
  }

  /**
   * A job found on the service by `mediabatch import` (docs/import.md), recorded as an accepted
   * attempt so that spend, budget and resumption see it as if this ledger had submitted it. Its
   * real Idempotency-Key is unknown; the placeholder is never sent, since an accepted attempt is
   * never resent.
   */
  recordImportedJob(imported: ImportedJob): AttemptRecord {
    return recordImportedJob(this.#c, imported);
  }

  /** The service answered with a job (202, a replay, or an adoption after reconciliation). */
  recordAccepted(attemptId: number, httpStatus: number | null, job: JobSnapshot): AttemptRecord {
    return recordAccepted(this.#c, attemptId, httpStatus, job);
  }

  /** The service refused the request with an HTTP error: no job, no charge, reservation released. */
  recordRejected(attemptId: number, httpStatus: number, code: string | null, message: string): AttemptRecord {
    return recordRejected(this.#c, attemptId, httpStatus, code, message);
  }

  /** The service no longer knows the attempt's job: it stays charged, and its item is pending again. */
  recordJobLost(attemptId: number, message: string): AttemptRecord {
    return recordJobLost(this.#c, attemptId, message);
  }

  /** A later view of an accepted job (status, refund, expiry). */
  recordJob(attemptId: number, job: JobSnapshot): AttemptRecord {
    return recordJob(this.#c, attemptId, job);
  }

  // ---- files (file-rows.ts) ----------------------------------------------------------------

  listFiles(): FileRecord[] {
    return listFiles(this.#c);
  }

  savedFileTotals(): { bytes: number; outputs: number } {
    return savedFileTotals(this.#c);
  }

  /** A saved take copied to an item whose request it answers: attempt, files and the item done, in one step. */
  recordReusedTake(reused: ReusedTake): AttemptRecord {
    return recordReused(this, reused, () => insertReusedAttempt(this.#c, reused));
  }

  reusableTakes(): ReusableTake[] {
    return reusableTakes(this.#c);
  }

  /** Every file of an attempt, saved and verified, and the attempt marked complete, in one step. */
  recordFilesSaved(attemptId: number, files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>): void {
    recordFilesSaved(this.#c, attemptId, files);
  }

  /** An earlier take's file now lives under a new name (kept beside the newer take). */
  recordFileMoved(attemptId: number, idx: number, path: string): void {
    recordFileMoved(this.#c, attemptId, idx, path);
  }

  // ---- one row per item, for the read-only commands (item-summaries.ts, item-entries.ts) ----
  // Streamed from SQLite: at 100,000 items, holding every attempt was most of status's and plan's
  // time and memory. Each must be read to its end before the ledger closes.

  /** What `status` shows of each item the ledger knows. */
  itemSummaries(): IterableIterator<ItemSummary> {
    return itemSummaries(this.#c);
  }

  /** Each item's row and latest attempt, as `plan` decides from them (see ItemEntry). */
  itemEntries(): IterableIterator<ItemEntry> {
    return itemEntries(this.#c);
  }

  /** What `export` writes of each of these items, in their order (see ItemExport). */
  itemExports(ids: readonly string[]): IterableIterator<ItemExport> {
    return itemExports(this.#c, ids);
  }

  /** Items paid for (charged, or files saved) that are not among `ids`, in id order (export). */
  paidItemsNotIn(ids: readonly string[]): string[] {
    return paidItemsNotIn(this.#c, ids);
  }

  /** The prices charged so far, one row per kind of request (price-samples.ts). */
  priceSamples(): PriceSample[] {
    return priceSamples(this.#c);
  }

  /** Succeeded jobs whose files are not saved yet (summary columns), in id order. */
  unsavedSucceeded(): AttemptRecord[] {
    return unsavedSucceeded(this.#c);
  }

  /** Whether this batch saved a file now named `path` (a file it did not write is never overwritten). */
  wroteFile(path: string): boolean {
    return wroteFile(this.#c, path);
  }

  /** The files each item's output stands on, with their recorded size, hash and time (saved-files.ts). */
  savedFileFacts(): IterableIterator<SavedFileFacts> {
    return savedFileFacts(this.#c);
  }

  /** When an attempt's files were saved, or null. */
  savedAt(attemptId: number): string | null {
    return savedAtOf(this.#c, attemptId);
  }

  /** Each saved file as [item id, path], in listFiles order. */
  itemFilePaths(): IterableIterator<[string, string]> {
    return itemFilePaths(this.#c);
  }

  // ---- keepers (keeper-rows.ts) ------------------------------------------------------------

  /** Which take of each manifest item a person kept, in item id order. */
  keepers(): KeeperRecord[] {
    return keepers(this.#c);
  }

  /** Sets or clears keepers in one transaction, committed at once. */
  savedTakes(): SavedTake[] {
    return savedTakes(this.#c);
  }

  hasLaterTakes(): boolean {
    return hasLaterTakes(this.#c);
  }

  setKeepers(changes: readonly KeeperChange[]): void {
    setKeepers(this.#c, changes);
  }

  // ---- service (service-binding.ts) --------------------------------------------------------

  /** The service this ledger belongs to, or null while none has answered a run's pre-flight. */
  service(): ServiceBinding | null {
    return boundService(this.#c);
  }

  /** Binds the ledger to `identity` once; a ledger already bound keeps its service. */
  bindService(identity: string): ServiceBinding {
    return bindService(this.#c, identity);
  }

  // ---- money, runs, events (attempt-reads.ts, runs-and-events.ts) --------------------------

  /** The sums of moneyTotalsOf (money-totals.ts), in SQL: the runner asks before every submission. */
  moneyTotals(): MoneyTotals {
    return moneyTotals(this.#c);
  }

  startRun(pid: number): number {
    return startRun(this.#c, pid);
  }

  endRun(runId: number, exitCode: number): void {
    endRun(this.#c, runId, exitCode);
  }

  lastRun(): { pid: number; startedAt: string } | null {
    return lastRun(this.#c);
  }

  appendEvent(itemId: string | null, attemptId: number | null, kind: string, detail?: unknown): void {
    appendEvent(this.#c, itemId, attemptId, kind, detail ?? null);
  }

  // ---- the whole batch (batch-dump.ts) -----------------------------------------------------

  dumpBatch(): BatchDump {
    return dumpBatch(this.#c);
  }

  loadBatch(dump: BatchDump): void {
    loadBatch(this.#c, dump);
  }
}
