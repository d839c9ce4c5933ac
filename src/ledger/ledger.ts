import type { NewAttempt } from './attempt-prepare.js';
import type { ItemHistory } from './gallery-entries.js';
import type { ItemEntry } from './item-entries.js';
import type { ItemExport } from './item-exports.js';
import type { FileMove } from './item-rename.js';
import type { ItemUpdate } from './item-rows.js';
import type { ItemSummary } from './item-summaries.js';
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
  TakeCheckRecord,
} from './records.js';
import type { ResultOfCopy } from './result-record.js';
import type { ReusableTake, ReusedTake, TakeToFetch } from './reused-take.js';
import type { SavedFileFacts } from './saved-files.js';
import type { BatchDefinitions, RunnerClaims } from './shared-batch.js';
import type { FailedTakes, TakeCheckInput } from './take-checks.js';

export type { NewAttempt } from './attempt-prepare.js';
export type { ItemEntry } from './item-entries.js';
export type { ItemExport } from './item-exports.js';
export type { FileMove } from './item-rename.js';
export type { ItemUpdate } from './item-rows.js';
export type { ItemSummary } from './item-summaries.js';
export type { PriceSample } from './price-samples.js';
export type { SavedFileFacts } from './saved-files.js';
export type {
  Admission,
  Admitted,
  BatchDefinitions,
  BatchJob,
  JobView,
  RunnerClaims,
  StoredDefinition,
} from './shared-batch.js';
export type { FailedTakes, ShownCheck, TakeCheckInput } from './take-checks.js';

/**
 * The durable record of one batch: the one door to it. Every method is one transaction, so a
 * kill at any instant leaves either the whole step or none of it. Every method is asynchronous:
 * the runner goes on handling answers, polls and downloads while the database answers, and
 * awaits a write-ahead step (prepareAttempts) before the POST it covers. Steps run in the order
 * they are called, so a read sees every write called before it. The API key never passes
 * through here. One implementation (kysely-ledger.ts) keeps the contract on two databases
 * (test/ledger/contract.test.ts): a SQLite file, held by one run (dialect/sqlite.ts), and a
 * PostgreSQL database that several runners share (dialect/postgres.ts).
 *
 * Its opener holds it whole; each command and the runner is handed only the roles below it uses.
 */
export interface Ledger
  extends LedgerLifecycle,
    RunLedger,
    RecordReads,
    ReadingLedger,
    TakeLedger,
    SharedLedger,
    CopyLedger {}

/** What opens, names and closes a ledger, and its runs, events and service: the commands that open one. */
export interface LedgerLifecycle {
  /** Where it is, as shown to people: the file's path, or the database's URL without its password. */
  readonly path: string;
  readonly batchId: number;

  close(): Promise<void>;

  /** The service this ledger belongs to, or null while none has answered a run's pre-flight. */
  service(): Promise<ServiceBinding | null>;
  /** Binds the ledger to `identity` once; a ledger already bound keeps its service. */
  bindService(identity: string): Promise<ServiceBinding>;
  startRun(pid: number): Promise<number>;
  endRun(runId: number, exitCode: number): Promise<void>;
  lastRun(): Promise<{ pid: number; startedAt: string } | null>;
  appendEvent(itemId: string | null, attemptId: number | null, kind: string, detail?: unknown): Promise<void>;
}

/** A run's writes, each made durable with the step it records: the runner's (import and forget write a few). */
export interface RunLedger {
  /**
   * Group commit (docs/performance.md): steps a re-run can redo safely join one open transaction,
   * committed at most `withinMs` later. prepareAttempts is always committed before it returns.
   */
  groupCommits(withinMs: number): void;
  /** Commits the open group, if any. */
  flush(): Promise<void>;
  /** Resolves once every step called before is committed (SQLite's group on its own timer). */
  committed(): Promise<void>;

  // ---- items --------------------------------------------------------------------------------
  /** Inserts or rewrites many items at once (manifest sync); one transaction for all of them. */
  putItems(items: ReadonlyArray<{ itemId: string } & ItemUpdate>): Promise<void>;
  setItemState(itemId: string, update: ItemUpdate, event?: { kind: string; detail?: unknown }): Promise<void>;
  /** An item renamed with its request unchanged: its row, attempts and files follow the new id. */
  renameItem(from: string, to: string, moves: readonly FileMove[]): Promise<void>;

  // ---- attempts -----------------------------------------------------------------------------
  /** Write-ahead: the key, exact body and reservation are durable before the POST is sent. */
  prepareAttempt(attempt: NewAttempt): Promise<AttemptRecord>;
  /** Several attempts made durable together, each before its own POST (a runner of a shared ledger: claims.prepare). */
  prepareAttempts(attempts: readonly NewAttempt[]): Promise<AttemptRecord[]>;
  /** The service answered with a job (202, a replay, or an adoption after reconciliation). */
  recordAccepted(attemptId: number, httpStatus: number | null, job: JobSnapshot): Promise<AttemptRecord>;
  /** The service refused the request with an HTTP error: no job, no charge, reservation released. */
  recordRejected(
    attemptId: number,
    httpStatus: number,
    code: string | null,
    message: string,
  ): Promise<AttemptRecord>;
  /** The service no longer knows the attempt's job: it stays charged, and its item is pending again. */
  recordJobLost(attemptId: number, message: string): Promise<AttemptRecord>;
  /** A later view of an accepted job (status, refund, expiry). */
  recordJob(attemptId: number, job: JobSnapshot): Promise<AttemptRecord>;
  /** Later views of several accepted jobs in one step (a look's); their attempts in the same order. */
  recordJobs(views: ReadonlyArray<{ attemptId: number; job: JobSnapshot }>): Promise<AttemptRecord[]>;

  // ---- files --------------------------------------------------------------------------------
  /**
   * Every file of an attempt, saved and verified, and the attempt marked complete, in one step;
   * with `item`, that item's new state too, in the same transaction.
   */
  recordFilesSaved(
    attemptId: number,
    files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>,
    item?: { itemId: string; update: ItemUpdate },
  ): Promise<void>;
  /**
   * recordFilesSaved, with the take's check against its request (docs/checks.md) in the same
   * transaction, and a `take_checked` event.
   */
  recordCheckedFiles(
    attemptId: number,
    files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>,
    check: TakeCheckInput,
    item?: { itemId: string; update: ItemUpdate },
  ): Promise<void>;
  /** An earlier take's file now lives under a new name (preserved beside the newer take). */
  recordFileMoved(attemptId: number, idx: number, path: string): Promise<void>;
}

/** The batch's rows read whole or by id: what the runner restores and decides from, and the commands too. */
export interface RecordReads {
  /** Every item of the batch, or only those named (an adoption reads a few of a large batch). */
  listItems(itemIds?: readonly string[]): Promise<ItemRecord[]>;
  /** How many items the batch has rows for. */
  countItems(): Promise<number>;
  /** Every attempt of the batch (or of the items named), whole, in id order. */
  listAttempts(itemIds?: readonly string[]): Promise<AttemptRecord[]>;
  getAttempt(id: number): Promise<AttemptRecord>;
  /** An attempt's request body and hash alone (plan's read for an item whose hash differs). */
  attemptRequest(id: number): Promise<Pick<AttemptRecord, 'requestBody' | 'requestHash'>>;
  /** False for a new ledger (or one whose runs never got as far as preparing a request). */
  hasAttempts(): Promise<boolean>;
  /** Every saved file of the batch, or only those of the attempts named. */
  listFiles(attemptIds?: readonly number[]): Promise<FileRecord[]>;
  savedFileTotals(): Promise<{ bytes: number; outputs: number }>;
  /** Every take check of the batch, or only those of the attempts named, in attempt order. */
  takeChecks(attemptIds?: readonly number[]): Promise<TakeCheckRecord[]>;
  /** One take's check, or null when it was never checked. */
  takeCheckOf(attemptId: number): Promise<TakeCheckRecord | null>;
  /** How many takes of each item's each request failed their check (what re-rolls count against). */
  failedTakes(): Promise<FailedTakes[]>;
  /** Charged, refunded and reserved sums of the batch (all its runners): asked before every submission. */
  moneyTotals(): Promise<MoneyTotals>;
  /** The prices charged so far, one row per kind of request. */
  priceSamples(): Promise<PriceSample[]>;
  /** Jobs moderation rejected (`content_rejected`), in id order: requests not sent again (docs/manifest.md). */
  rejectedAttempts(): Promise<AttemptRecord[]>;
  /** Whether this batch saved a file now named `path` (a file it did not write is never overwritten). */
  wroteFile(path: string): Promise<boolean>;
  /** The files recorded at this path, of any attempt (none, or one). */
  filesAt(path: string): Promise<FileRecord[]>;
  /** When an attempt's files were saved, or null. */
  savedAt(attemptId: number): Promise<string | null>;
  /** Each saved file as [item id, path], in listFiles order. */
  itemFilePaths(): AsyncIterable<[string, string]>;
}

/** One row per item, streamed or by page: the reading commands' (status, plan, export, the gallery, audit). */
export interface ReadingLedger {
  /** What `status` shows of each item the ledger knows. */
  itemSummaries(): AsyncIterable<ItemSummary>;
  /** The same of these items (a page of a manifest's), by id; an item the ledger does not know has none. */
  itemSummariesOf(ids: readonly string[]): Promise<Map<string, ItemSummary>>;
  /** Each item's row and latest attempt, as `plan` decides from them. */
  itemEntries(): AsyncIterable<ItemEntry>;
  /** The entries of these items (a page of a manifest's), by id; an item the ledger does not know has none. */
  itemEntriesOf(ids: readonly string[]): Promise<Map<string, ItemEntry>>;
  /** What `export` writes of each of these items, in their order. */
  itemExports(ids: readonly string[]): AsyncIterable<ItemExport>;
  /**
   * Each of these items' state and every attempt without its request, with its files' paths, in
   * their order, then the other items the ledger knows in id order (the gallery).
   */
  itemHistories(ids: readonly string[]): AsyncIterable<ItemHistory>;
  /** Items paid for (charged, or files saved) that are not among `ids`, in id order (export). */
  /** `ids`: the manifest's ids, or a test of whether it lists one (a streamed manifest's). */
  paidItemsNotIn(ids: readonly string[] | { has(id: string): boolean }): Promise<string[]>;
  /** Succeeded jobs whose files are not saved yet (summary columns), in id order. */
  unsavedSucceeded(): Promise<AttemptRecord[]>;
  /** Failed or canceled jobs not refunded in full, in id order (the summary view's columns). */
  unrefundedFailures(): Promise<AttemptRecord[]>;
  /** The files each item's output stands on, with their recorded size, hash and time. */
  savedFileFacts(): AsyncIterable<SavedFileFacts>;
  /** The same for these items only (a page of a manifest's), in attempt and file order. */
  savedFileFactsOf(ids: readonly string[]): Promise<SavedFileFacts[]>;
}

/** The takes saved, checked and kept (docs/gallery.md): keep, check, the gallery, and the runner's reuse of a take. */
export interface TakeLedger {
  /** Which take of each manifest item a person kept, in item id order. */
  keepers(): Promise<KeeperRecord[]>;
  /** Every attempt whose files were saved, with them, in attempt order: the takes `keep` chooses from. */
  savedTakes(): Promise<SavedTake[]>;
  /** Every saved take with the request its attempt sent: a result found by what it is (runner/take-index.ts). */
  reusableTakes(): Promise<ReusableTake[]>;
  /**
   * A saved take copied to an item whose request it answers exactly (runner/reuse-takes.ts): a new
   * attempt with no job of its own and no charge, its files saved and its item done, in one
   * transaction, with a `take_reused` event naming the take it copies.
   */
  recordReusedTake(reused: ReusedTake): Promise<AttemptRecord>;
  /**
   * A result whose every saved take is lost, had again from its job while the service holds it
   * (runner/held-results.ts): the same attempt as a copy's, with no files yet and a `take_fetched`
   * event, its item in flight until the job's outputs are saved into it, in one transaction.
   */
  recordTakeToFetch(take: TakeToFetch): Promise<AttemptRecord>;
  /** What a copied take points at: its result (the attempt whose job made the bytes) and its source take. */
  resultOfCopy(attempt: AttemptRecord): Promise<ResultOfCopy | null>;
  /** Whether any attempt made a take after the first (a redo, an edit): a cheap look, for reads that skip savedTakes without. */
  hasLaterTakes(): Promise<boolean>;
  /** Sets or clears keepers, all in one transaction, each with an event; nothing else changes. */
  setKeepers(changes: readonly KeeperChange[]): Promise<void>;
  /** A saved take checked again (`mediabatch check`): its check replaced, its item's state with it. */
  recordTakeCheck(
    attemptId: number,
    check: TakeCheckInput,
    item?: { itemId: string; update: ItemUpdate },
  ): Promise<void>;
}

/** A batch several runners work (docs/shared-ledger.md): its claims, its definition, who runs it now. */
export interface SharedLedger {
  /** Several runs may work the batch at once (dialect/database.ts): they coordinate through `claims`. */
  readonly severalRunners: boolean;
  readonly claims: RunnerClaims | null;
  /** The batch's definition, for a ledger runners share; null for one whose manifest file is the definition. */
  readonly definitions: BatchDefinitions | null;
  /**
   * Runs of this batch, on any machine, whose heartbeat is younger than a lease: a shared
   * ledger's live runners (this one among them while it runs). 0 for a ledger one run holds.
   */
  liveRuns(): Promise<number>;
  /** The machines of the batch's live runners (liveRuns); none for a ledger one run holds. */
  liveHosts(): Promise<string[]>;
}

/** Records brought in whole: a batch copied from another ledger (copy-ledger), jobs found on the service (import). */
export interface CopyLedger {
  /**
   * Jobs found on the service by `import`, each recorded as an accepted attempt, and `items` put,
   * in one transaction (docs/import.md). The attempts come back in the order of `imported`.
   */
  recordImportedJobs(
    imported: readonly ImportedJob[],
    items: ReadonlyArray<{ itemId: string } & ItemUpdate>,
  ): Promise<AttemptRecord[]>;
  /**
   * Every row of this batch, whole, in memory: the batch row's manifest path and creation time,
   * the service binding, items, attempts (every column, with this ledger's ids), files (paths in
   * their stored form), events, runs and keepers. Reads only; works on a ledger opened read-only.
   */
  dumpBatch(): Promise<BatchDump>;
  /**
   * Writes `dump` into this batch, which must record no item and no attempt (else it throws, and
   * writes nothing), in one transaction: the whole batch or none of it. Attempts get new ids here,
   * and the files and events that name them follow. A target bound to another service throws.
   */
  loadBatch(dump: BatchDump): Promise<void>;
}
