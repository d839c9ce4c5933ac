import * as prepare from './attempt-prepare.js';
import * as reads from './attempt-reads.js';
import * as writes from './attempt-writes.js';
import { dumpBatch, loadBatch } from './batch-dump.js';
import { liveHostsQuery, liveRunsQuery } from './claim-queries.js';
import { LeaseClaims } from './claims.js';
import { StoredDefinitions } from './definitions.js';
import * as files from './file-rows.js';
import { itemHistories } from './gallery-entries.js';
import { itemEntries, itemEntriesOf } from './item-entries.js';
import { itemExports, paidItemsNotIn } from './item-exports.js';
import { renameItem } from './item-rename.js';
import * as items from './item-rows.js';
import { itemSummaries, itemSummariesOf } from './item-summaries.js';
import * as keeperRows from './keeper-rows.js';
import { settles } from './leases.js';
import type { Ledger } from './ledger.js';
import type { LedgerContext } from './ledger-context.js';
import { priceSamples } from './price-samples.js';
import { resultOfCopy } from './result-record.js';
import { recordReusedTake, recordTakeToFetch } from './reused-take.js';
import * as runs from './runs-and-events.js';
import { savedFileFacts, savedFileFactsOf } from './saved-files.js';
import { bindService, boundService } from './service-binding.js';
import * as checks from './take-checks.js';

/** What a read of one attempt gives where there is no batch: the error of an attempt not found. */
const noAttempt = (id: number) => (): never => {
  throw new Error(`the ledger has no attempt ${id}`);
};

type Steps = Omit<Ledger, 'path' | 'batchId' | 'severalRunners' | 'claims' | 'definitions'>;

/**
 * The ledger (ledger.ts) over Kysely, one implementation for both databases: a SQLite file one
 * run holds (dialect/sqlite.ts, lock.ts) and a PostgreSQL database several runners share
 * (dialect/postgres.ts, with claims and definitions). Each method is one step of a module that
 * owns its tables, run after every step called before it (LedgerDatabase.step); streamed reads
 * read a page per step. A read-only look at a batch never recorded reads as empty.
 */
export class KyselyLedger implements Ledger {
  readonly path: string;
  readonly batchId: number;
  readonly severalRunners: boolean;
  readonly claims: LeaseClaims | null;
  readonly definitions: StoredDefinitions | null;
  readonly #c: LedgerContext;
  readonly #leaseMs: number;

  constructor(c: LedgerContext, shown: string, leaseMs: number) {
    this.#c = c;
    this.#leaseMs = leaseMs;
    this.path = shown;
    this.batchId = c.batchId;
    this.severalRunners = c.can.severalRunners;
    this.claims = this.severalRunners && c.runnerId !== null ? new LeaseClaims(c, c.runnerId, leaseMs) : null;
    this.definitions = c.can.storesDefinitions ? new StoredDefinitions(c) : null;
  }

  /** One step in order; `empty`, without a read, where there is no batch to read. */
  #step<T>(work: (c: LedgerContext) => Promise<T>, empty?: () => T): Promise<T> {
    const c = this.#c;
    return c.db.step(() => (empty !== undefined && c.none ? Promise.resolve(empty()) : work(c)));
  }

  close(): Promise<void> {
    return this.#c.db.close();
  }

  groupCommits(withinMs: number): void {
    this.#c.db.groupCommits(withinMs);
  }

  committed(): Promise<void> {
    return this.#c.db.committed();
  }

  flush(): Promise<void> {
    return this.#c.db.flush();
  }

  // ---- items, attempts, files ------------------------------------------------------------------
  listItems: Steps['listItems'] = (ids) =>
    this.#step(
      (c) => items.listItems(c, ids),
      () => [],
    );
  countItems: Steps['countItems'] = () => this.#step(items.countItems, () => 0);
  putItems: Steps['putItems'] = (list) => this.#step((c) => items.putItems(c, list));
  setItemState: Steps['setItemState'] = (itemId, update, event) =>
    this.#step(async (c) => {
      await items.setItemState(c, itemId, update, event);
      if (settles(update.state)) this.claims?.settled(itemId);
    });
  renameItem: Steps['renameItem'] = (from, to, moves) => this.#step((c) => renameItem(c, from, to, moves));
  listAttempts: Steps['listAttempts'] = (ids) =>
    this.#step(
      (c) => reads.listAttempts(c, ids),
      () => [],
    );
  getAttempt: Steps['getAttempt'] = (id) => this.#step((c) => reads.getAttempt(c, id), noAttempt(id));
  attemptRequest: Steps['attemptRequest'] = (id) =>
    this.#step((c) => reads.attemptRequest(c, id), noAttempt(id));
  hasAttempts: Steps['hasAttempts'] = () => this.#step(reads.hasAttempts, () => false);
  prepareAttempt: Steps['prepareAttempt'] = async (attempt) => (await this.prepareAttempts([attempt]))[0]!;
  prepareAttempts: Steps['prepareAttempts'] = (list) => this.#step((c) => prepare.prepareAttempts(c, list));
  recordImportedJobs: Steps['recordImportedJobs'] = (imported, list) =>
    this.#step((c) => writes.recordImportedJobs(c, imported, list));
  // Steps of one write each (LedgerDatabase.write), not inside #step: a shared ledger sends those
  // queued one after another together.
  recordAccepted: Steps['recordAccepted'] = (id, status, job) =>
    writes.recordAccepted(this.#c, id, status, job);
  recordRejected: Steps['recordRejected'] = (id, status, code, message) =>
    writes.recordRejected(this.#c, id, status, code, message);
  recordJobLost: Steps['recordJobLost'] = (id, message) =>
    this.#step((c) => writes.recordJobLost(c, id, message));
  recordJob: Steps['recordJob'] = async (id, job) =>
    (await writes.recordJobs(this.#c, [{ attemptId: id, job }]))[0]!;
  recordJobs: Steps['recordJobs'] = (views) => writes.recordJobs(this.#c, views);
  listFiles: Steps['listFiles'] = (attemptIds) =>
    this.#step(
      (c) => files.listFiles(c, attemptIds),
      () => [],
    );
  filesAt: Steps['filesAt'] = (path) =>
    this.#step(
      (c) => files.filesAt(c, path),
      () => [],
    );
  savedFileTotals: Steps['savedFileTotals'] = () =>
    this.#step(files.savedFileTotals, () => ({ bytes: 0, outputs: 0 }));
  recordFilesSaved: Steps['recordFilesSaved'] = async (id, saved, item) => {
    await files.recordFilesSaved(this.#c, id, saved, item);
    if (item && settles(item.update.state)) this.claims?.settled(item.itemId);
  };
  recordCheckedFiles: Steps['recordCheckedFiles'] = async (id, saved, check, item) => {
    await checks.recordCheckedFiles(this.#c, id, saved, check, item);
    if (item && settles(item.update.state)) this.claims?.settled(item.itemId);
  };
  recordTakeCheck: Steps['recordTakeCheck'] = (id, check, item) =>
    this.#step((c) => checks.recordTakeCheck(c, id, check, item));
  takeChecks: Steps['takeChecks'] = (attemptIds) =>
    this.#step(
      (c) => checks.takeChecks(c, attemptIds),
      () => [],
    );
  takeCheckOf: Steps['takeCheckOf'] = (id) =>
    this.#step(
      (c) => checks.takeCheckOf(c, id),
      () => null,
    );
  failedTakes: Steps['failedTakes'] = () => this.#step(checks.failedTakes, () => []);
  recordFileMoved: Steps['recordFileMoved'] = (id, idx, path) =>
    this.#step((c) => files.recordFileMoved(c, id, idx, path));

  // ---- one row per item, streamed a page per step -----------------------------------------------
  itemSummaries: Steps['itemSummaries'] = () => itemSummaries(this.#c);
  itemSummariesOf: Steps['itemSummariesOf'] = (ids) =>
    this.#step(
      (c) => itemSummariesOf(c, ids),
      () => new Map(),
    );
  itemEntries: Steps['itemEntries'] = () => itemEntries(this.#c);
  itemEntriesOf: Steps['itemEntriesOf'] = (ids) =>
    this.#step(
      (c) => itemEntriesOf(c, ids),
      () => new Map(),
    );
  itemExports: Steps['itemExports'] = (ids) => itemExports(this.#c, ids);
  itemHistories: Steps['itemHistories'] = (ids) => itemHistories(this.#c, ids);
  paidItemsNotIn: Steps['paidItemsNotIn'] = (ids) => paidItemsNotIn(this.#c, ids);
  savedFileFacts: Steps['savedFileFacts'] = () => savedFileFacts(this.#c);
  savedFileFactsOf: Steps['savedFileFactsOf'] = (ids) =>
    this.#step(
      (c) => savedFileFactsOf(c, ids),
      () => [],
    );
  itemFilePaths: Steps['itemFilePaths'] = () => files.itemFilePaths(this.#c);
  priceSamples: Steps['priceSamples'] = () => this.#step(priceSamples, () => []);
  unsavedSucceeded: Steps['unsavedSucceeded'] = () => this.#step(reads.unsavedSucceeded, () => []);
  unrefundedFailures: Steps['unrefundedFailures'] = () => this.#step(reads.unrefundedFailures, () => []);
  rejectedAttempts: Steps['rejectedAttempts'] = () => this.#step(reads.rejectedAttempts, () => []);
  wroteFile: Steps['wroteFile'] = (path) =>
    this.#step(
      (c) => files.wroteFile(c, path),
      () => false,
    );
  savedAt: Steps['savedAt'] = (id) =>
    this.#step(
      (c) => files.savedAt(c, id),
      () => null,
    );

  // ---- keepers --------------------------------------------------------------------------------
  keepers: Steps['keepers'] = () => this.#step(keeperRows.keepers, () => []);
  savedTakes: Steps['savedTakes'] = () => this.#step(keeperRows.savedTakes, () => []);
  reusableTakes: Steps['reusableTakes'] = () => this.#step(keeperRows.reusableTakes, () => []);
  recordReusedTake: Steps['recordReusedTake'] = (reused) => this.#step((c) => recordReusedTake(c, reused));
  recordTakeToFetch: Steps['recordTakeToFetch'] = (take) => this.#step((c) => recordTakeToFetch(c, take));
  resultOfCopy: Steps['resultOfCopy'] = (attempt) => this.#step((c) => resultOfCopy(c, attempt));
  hasLaterTakes: Steps['hasLaterTakes'] = () => this.#step(keeperRows.hasLaterTakes, () => false);
  setKeepers: Steps['setKeepers'] = (changes) => this.#step((c) => keeperRows.setKeepers(c, changes));

  // ---- service, money, runs, events -------------------------------------------------------------
  service: Steps['service'] = () => this.#step(boundService, () => null);
  bindService: Steps['bindService'] = (identity) => this.#step((c) => bindService(c, identity));
  moneyTotals: Steps['moneyTotals'] = () =>
    this.#step(reads.moneyTotals, () => ({ chargedMicros: 0, refundedMicros: 0, reservedMicros: 0 }));
  startRun: Steps['startRun'] = (pid) =>
    this.#step(async (c) => {
      const runId = await runs.startRun(c, pid);
      this.claims?.runStarted(runId);
      return runId;
    });
  endRun: Steps['endRun'] = async (runId, exitCode) => {
    await this.claims?.release();
    await this.#step((c) => runs.endRun(c, runId, exitCode));
  };
  lastRun: Steps['lastRun'] = () => this.#step(runs.lastRun, () => null);
  appendEvent: Steps['appendEvent'] = (itemId, attemptId, kind, detail) =>
    this.#step((c) => runs.appendEvent(c, itemId, attemptId, kind, detail ?? null));
  liveRuns: Steps['liveRuns'] = () =>
    this.#step(async (c) => {
      if (!c.can.severalRunners || c.none) return 0;
      const [row] = await c.db.read(liveRunsQuery(c, this.#leaseMs));
      return Number(row?.live ?? 0);
    });
  liveHosts: Steps['liveHosts'] = () =>
    this.#step(async (c) => {
      if (!c.can.severalRunners || c.none) return [];
      return (await c.db.read(liveHostsQuery(c, this.#leaseMs))).map((row: { host: string }) => row.host);
    });

  // ---- the whole batch ------------------------------------------------------------------------
  dumpBatch: Steps['dumpBatch'] = () => this.#step(dumpBatch);
  loadBatch: Steps['loadBatch'] = (dump) => this.#step((c) => loadBatch(c, dump));

  /** The durability settings in force on a SQLite ledger's connection (synchronous 2 is FULL). */
  settings(): Promise<{ journalMode: string; synchronous: number } | null> {
    return this.#step((c) => c.db.fileSettings());
  }

  /** SQLite's own check of the file ('ok'); null for PostgreSQL. */
  integrityCheck(): Promise<string | null> {
    return this.#step((c) => c.db.integrityCheck());
  }
}
