// The synchronous ledgers of before the one asynchronous ledger (ledger.ts): fromSync adapts them.
import type { NewAttempt } from './attempt-writes.js';
import type { ItemEntry } from './item-entries.js';
import type { ItemExport } from './item-exports.js';
import type { FileMove } from './item-rename.js';
import type { ItemUpdate } from './item-rows.js';
import type { ItemSummary } from './item-summaries.js';
import type { Admission, Admitted, BatchJob, JobView, StoredDefinition } from './ledger.js';
import type { PriceSample } from './price-samples.js';
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
import type { SavedFileFacts } from './saved-files.js';

/**
 * A shared batch's definition, one revision after another: what every runner of it runs. A ledger
 * held by one run has none (its manifest file is the definition).
 */
export interface SyncBatchDefinitions {
  /** The batch's current revision, or null while none was written. */
  current(): StoredDefinition | null;
  /**
   * In one transaction under the batch's lock: writes `next` as the batch's next revision if the
   * current one is still `over` (0: none yet) and has another hash; returns the current revision
   * after it, written or not (the caller compares its hash: another runner may have been first).
   */
  define(next: Omit<StoredDefinition, 'revision' | 'definedAt'>, over: number): StoredDefinition;
}

/**
 * The work of one runner among several on a shared ledger. An item is worked by the runner that
 * holds its lease; a lease not renewed within `leaseMs` (its runner died or lost the database)
 * lets another runner adopt the item, its unanswered POST and its accepted job.
 */
export interface SyncRunnerClaims {
  readonly runnerId: string;
  readonly leaseMs: number;
  /** New attempts admitted against every runner's slots and budget, then committed (see Admitted). */
  prepare(attempts: readonly NewAttempt[], admission: Admission): Admitted;
  /**
   * Claims an item this runner is about to decide without sending (over budget, say): only if no
   * live lease of another runner holds it and its newest attempt is the one this runner knows
   * (`knownSeq`, 0 for none). False: another runner works it.
   */
  claimUnsent(itemId: string, knownSeq: number): boolean;
  /** Claims these items where no live lease of another runner holds them; returns those this runner now holds. */
  claim(itemIds: readonly string[]): Set<string>;
  /** Extends this runner's leases (and its run's heartbeat); returns the items whose lease it lost meanwhile. */
  renew(): string[];
  /** Items of the batch held by a live lease of another runner. */
  heldElsewhere(): Set<string>;
  /**
   * Gives up these items' leases (all of this runner's when omitted, the batch's look with them),
   * so others need not wait them out.
   */
  release(itemIds?: readonly string[]): void;
  /**
   * One lister per batch (docs/shared-ledger.md): takes the batch's look at the service's job list
   * if this runner took the last one, or if nobody took one within `turnMs`. Returns the batch's
   * accepted jobs not known to be final (every runner's), for it to list; null when another runner
   * holds the look: this runner reads what it saw (jobViews) instead.
   */
  takeLook(turnMs: number): BatchJob[] | null;
  /** Lets the batch's look go, if this runner holds it: the next runner to look takes it at once. */
  releaseLook(): void;
  /**
   * What the lister saw of other runners' jobs, for them to read. A final view is never replaced;
   * views of jobs not among `unfinished` (their runner recorded them final) are dropped.
   */
  publishViews(views: readonly JobView[], unfinished: readonly string[]): void;
  /** The lister's views of these jobs, those it has published. */
  jobViews(jobIds: readonly string[]): JobView[];
}

/**
 * The durable record of one batch: the one door to it. Every method is one transaction, so a
 * kill at any instant leaves either the whole step or none of it. The API key never passes
 * through here. Two implementations keep the same contract (test/ledger/contract.test.ts): one
 * SQLite file, held by one run (sqlite-ledger.ts), and a PostgreSQL database that several runners
 * share (postgres/postgres-ledger.ts).
 */
export interface SyncLedger {
  readonly kind: 'sqlite' | 'postgres';
  /** Where it is, as shown to people: the file's path, or the database's URL without its password. */
  readonly path: string;
  readonly batchId: number;
  /** Several runs may work the batch at once: they coordinate through `claims`. */
  readonly shared: boolean;
  readonly claims: SyncRunnerClaims | null;
  /** The batch's definition, for a ledger runners share; null for one whose manifest file is the definition. */
  readonly definitions: SyncBatchDefinitions | null;

  close(): void;
  /** Runs `work` (ledger steps only) as one transaction: all of them or none. */
  atomically<T>(work: () => T): T;
  /**
   * Group commit (docs/performance.md): steps a re-run can redo safely join one open transaction,
   * committed at most `withinMs` later. prepareAttempts is always committed before it returns.
   */
  groupCommits(withinMs: number): void;
  /** Commits the open group, if any. */
  flush(): void;

  // ---- items --------------------------------------------------------------------------------
  listItems(): ItemRecord[];
  /** Inserts or rewrites many items at once (manifest sync); one transaction for all of them. */
  putItems(items: ReadonlyArray<{ itemId: string } & ItemUpdate>): void;
  setItemState(itemId: string, update: ItemUpdate, event?: { kind: string; detail?: unknown }): void;
  /** An item renamed with its request unchanged: its row, attempts and files follow the new id. */
  renameItem(from: string, to: string, moves: readonly FileMove[]): void;

  // ---- attempts -----------------------------------------------------------------------------
  /** Every attempt of the batch, whole, in id order. */
  listAttempts(): AttemptRecord[];
  getAttempt(id: number): AttemptRecord;
  /** An attempt's request body and hash alone (plan's read for an item whose hash differs). */
  attemptRequest(id: number): Pick<AttemptRecord, 'requestBody' | 'requestHash'>;
  /** False for a new ledger (or one whose runs never got as far as preparing a request). */
  hasAttempts(): boolean;
  /** Write-ahead: the key, exact body and reservation are durable before the POST is sent. */
  prepareAttempt(attempt: NewAttempt): AttemptRecord;
  /** Several attempts made durable together, each before its own POST (a runner of a shared ledger: claims.prepare). */
  prepareAttempts(attempts: readonly NewAttempt[]): AttemptRecord[];
  /** A job found on the service by `import`, recorded as an accepted attempt (docs/import.md). */
  recordImportedJob(imported: ImportedJob): AttemptRecord;
  /** The service answered with a job (202, a replay, or an adoption after reconciliation). */
  recordAccepted(attemptId: number, httpStatus: number | null, job: JobSnapshot): AttemptRecord;
  /** The service refused the request with an HTTP error: no job, no charge, reservation released. */
  recordRejected(attemptId: number, httpStatus: number, code: string | null, message: string): AttemptRecord;
  /** The service no longer knows the attempt's job: it stays charged, and its item is pending again. */
  recordJobLost(attemptId: number, message: string): AttemptRecord;
  /** A later view of an accepted job (status, refund, expiry). */
  recordJob(attemptId: number, job: JobSnapshot): AttemptRecord;

  // ---- files --------------------------------------------------------------------------------
  listFiles(): FileRecord[];
  savedFileTotals(): { bytes: number; outputs: number };
  /** Every file of an attempt, saved and verified, and the attempt marked complete, in one step. */
  recordFilesSaved(attemptId: number, files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>): void;
  /** An earlier take's file now lives under a new name (kept beside the newer take). */
  recordFileMoved(attemptId: number, idx: number, path: string): void;

  // ---- one row per item, for the read-only commands ------------------------------------------
  /** What `status` shows of each item the ledger knows. */
  itemSummaries(): IterableIterator<ItemSummary>;
  /** Each item's row and latest attempt, as `plan` decides from them. */
  itemEntries(): IterableIterator<ItemEntry>;
  /** What `export` writes of each of these items, in their order. */
  itemExports(ids: readonly string[]): IterableIterator<ItemExport>;
  /** Items paid for (charged, or files saved) that are not among `ids`, in id order (export). */
  paidItemsNotIn(ids: readonly string[]): string[];
  /** The prices charged so far, one row per kind of request. */
  priceSamples(): PriceSample[];
  /** Succeeded jobs whose files are not saved yet (summary columns), in id order. */
  unsavedSucceeded(): AttemptRecord[];
  /** Whether this batch saved a file now named `path` (a file it did not write is never overwritten). */
  wroteFile(path: string): boolean;
  /** The files each item's output stands on, with their recorded size, hash and time. */
  savedFileFacts(): IterableIterator<SavedFileFacts>;
  /** When an attempt's files were saved, or null. */
  savedAt(attemptId: number): string | null;
  /** Each saved file as [item id, path], in listFiles order. */
  itemFilePaths(): IterableIterator<[string, string]>;

  // ---- keepers (mediabatch keep, docs/gallery.md) ---------------------------------------------
  /** Which take of each manifest item a person kept, in item id order. */
  keepers(): KeeperRecord[];
  /** Every attempt whose files were saved, with them, in attempt order: the takes `keep` chooses from. */
  savedTakes(): SavedTake[];
  /** Every saved take with the request its attempt sent: a result found by what it is (runner/take-index.ts). */
  reusableTakes(): ReusableTake[];
  /**
   * A saved take copied to an item whose request it answers exactly (runner/reuse-takes.ts): a new
   * attempt with no job of its own and no charge, its files saved and its item done, in one
   * transaction, with a `take_reused` event naming the take it copies.
   */
  recordReusedTake(reused: ReusedTake): AttemptRecord;
  /** Whether any attempt made a take after the first (a redo, an edit): a cheap look, for reads that skip savedTakes without. */
  hasLaterTakes(): boolean;
  /** Sets or clears keepers, all in one transaction, each with an event; nothing else changes. */
  setKeepers(changes: readonly KeeperChange[]): void;

  // ---- service, money, runs, events -----------------------------------------------------------
  /** The service this ledger belongs to, or null while none has answered a run's pre-flight. */
  service(): ServiceBinding | null;
  /** Binds the ledger to `identity` once; a ledger already bound keeps its service. */
  bindService(identity: string): ServiceBinding;
  /** Charged, refunded and reserved sums of the batch (all its runners): asked before every submission. */
  moneyTotals(): MoneyTotals;
  startRun(pid: number): number;
  endRun(runId: number, exitCode: number): void;
  lastRun(): { pid: number; startedAt: string } | null;
  appendEvent(itemId: string | null, attemptId: number | null, kind: string, detail?: unknown): void;

  // ---- the whole batch (mediabatch copy-ledger) -----------------------------------------------
  /**
   * Every row of this batch, whole, in memory: the batch row's manifest path and creation time,
   * the service binding, items, attempts (every column, with this ledger's ids), files (paths in
   * their stored form), events, runs and keepers. Reads only; works on a ledger opened read-only.
   */
  dumpBatch(): BatchDump;
  /**
   * Writes `dump` into this batch, which must record no item and no attempt (else it throws, and
   * writes nothing), in one transaction: the whole batch or none of it. Attempts get new ids here,
   * and the files and events that name them follow. A target bound to another service throws.
   */
  loadBatch(dump: BatchDump): void;
}
