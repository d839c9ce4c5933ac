import type { BatchDefinitions, Ledger, RunnerClaims } from './ledger.js';
import type { SyncBatchDefinitions, SyncLedger, SyncRunnerClaims } from './sync-ledger.js';

async function* streamed<T>(rows: Iterable<T>): AsyncIterable<T> {
  yield* rows;
}

function claimsOf(c: SyncRunnerClaims): RunnerClaims {
  return {
    runnerId: c.runnerId,
    leaseMs: c.leaseMs,
    prepare: async (attempts, admission) => c.prepare(attempts, admission),
    claimUnsent: async (itemId, knownSeq) => c.claimUnsent(itemId, knownSeq),
    claim: async (itemIds) => c.claim(itemIds),
    renew: async () => c.renew(),
    heldElsewhere: async () => c.heldElsewhere(),
    release: async (itemIds) => c.release(itemIds),
    takeLook: async (turnMs) => c.takeLook(turnMs),
    releaseLook: async () => c.releaseLook(),
    publishViews: async (views, unfinished) => c.publishViews(views, unfinished),
    jobViews: async (jobIds) => c.jobViews(jobIds),
  };
}

function definitionsOf(d: SyncBatchDefinitions): BatchDefinitions {
  return { current: async () => d.current(), define: async (next, over) => d.define(next, over) };
}

/** A synchronous ledger behind the asynchronous door (ledger.ts). */
export function fromSync(l: SyncLedger): Ledger {
  return {
    kind: l.kind,
    path: l.path,
    batchId: l.batchId,
    shared: l.shared,
    claims: l.claims ? claimsOf(l.claims) : null,
    definitions: l.definitions ? definitionsOf(l.definitions) : null,
    close: async () => l.close(),
    liveHosts: async () =>
      'liveHosts' in l && typeof l.liveHosts === 'function' ? (l.liveHosts() as string[]) : [],
    liveRuns: async () =>
      'liveRuns' in l && typeof l.liveRuns === 'function' ? (l.liveRuns() as number) : 0,
    groupCommits: (withinMs) => l.groupCommits(withinMs),
    flush: async () => l.flush(),
    listItems: async () => l.listItems(),
    putItems: async (items) => l.putItems(items),
    setItemState: async (itemId, update, event) => l.setItemState(itemId, update, event),
    renameItem: async (from, to, moves) => l.renameItem(from, to, moves),
    listAttempts: async () => l.listAttempts(),
    getAttempt: async (id) => l.getAttempt(id),
    attemptRequest: async (id) => l.attemptRequest(id),
    hasAttempts: async () => l.hasAttempts(),
    prepareAttempt: async (attempt) => l.prepareAttempt(attempt),
    prepareAttempts: async (attempts) => l.prepareAttempts(attempts),
    recordImportedJobs: async (imported, items) =>
      l.atomically(() => {
        const attempts = imported.map((job) => l.recordImportedJob(job));
        l.putItems(items);
        return attempts;
      }),
    recordAccepted: async (id, status, job) => l.recordAccepted(id, status, job),
    recordRejected: async (id, status, code, message) => l.recordRejected(id, status, code, message),
    recordJobLost: async (id, message) => l.recordJobLost(id, message),
    recordJob: async (id, job) => l.recordJob(id, job),
    listFiles: async () => l.listFiles(),
    savedFileTotals: async () => l.savedFileTotals(),
    recordFilesSaved: async (id, files, item) =>
      l.atomically(() => {
        l.recordFilesSaved(id, files);
        if (item) l.setItemState(item.itemId, item.update);
      }),
    recordFileMoved: async (id, idx, path) => l.recordFileMoved(id, idx, path),
    itemSummaries: () => streamed(l.itemSummaries()),
    itemEntries: () => streamed(l.itemEntries()),
    itemExports: (ids) => streamed(l.itemExports(ids)),
    paidItemsNotIn: async (ids) => l.paidItemsNotIn(ids),
    priceSamples: async () => l.priceSamples(),
    unsavedSucceeded: async () => l.unsavedSucceeded(),
    wroteFile: async (path) => l.wroteFile(path),
    savedFileFacts: () => streamed(l.savedFileFacts()),
    savedAt: async (id) => l.savedAt(id),
    itemFilePaths: () => streamed(l.itemFilePaths()),
    keepers: async () => l.keepers(),
    savedTakes: async () => l.savedTakes(),
    reusableTakes: async () => l.reusableTakes(),
    recordReusedTake: async (reused) => l.recordReusedTake(reused),
    hasLaterTakes: async () => l.hasLaterTakes(),
    setKeepers: async (changes) => l.setKeepers(changes),
    service: async () => l.service(),
    bindService: async (identity) => l.bindService(identity),
    moneyTotals: async () => l.moneyTotals(),
    startRun: async (pid) => l.startRun(pid),
    endRun: async (runId, exitCode) => l.endRun(runId, exitCode),
    lastRun: async () => l.lastRun(),
    appendEvent: async (itemId, attemptId, kind, detail) => l.appendEvent(itemId, attemptId, kind, detail),
    dumpBatch: async () => l.dumpBatch(),
    loadBatch: async (dump) => l.loadBatch(dump),
  };
}
