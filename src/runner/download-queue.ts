import pLimit, { type LimitFunction } from 'p-limit';
import type { SavedFile } from '../downloads/save-job-files.js';
import { ApiConnectionError, ApiError } from '../errors.js';
import {
  type AttemptRecord,
  type RecordReads,
  type RunLedger,
  shownCheck,
  type TakeLedger,
} from '../ledger/index.js';
import type { MediaGenClient } from '../service-client/client.js';
import type { Job } from '../service-client/schemas.js';
import type { OutputStore, StoreSaveOutcome } from '../storage/output-store.js';
import { checkRecord } from './check-saved.js';
import type { Clock } from './clock.js';
import { MinHeap } from './min-heap.js';
import type { TakeCheck } from './output-check.js';
import { type DownloadRetryCause, decideDownloadRetry } from './policy.js';
import { beforePlacing, sidecarFactsOf } from './provenance.js';
import { type DiskRefuses, storeRefusal } from './stop-rules.js';

export interface DownloadTask {
  attempt: AttemptRecord;
  job: Job;
  /**
   * The job answered an earlier request of an item edited since: it was paid for, so it is saved,
   * under its own take's name (`<name>.take1.mp4`), and the item's state is not its to decide.
   */
  superseded?: boolean;
}

/** `checksFailed`: saved, but the take is not the video its request asked for (docs/checks.md). */
export type DownloadOutcome = 'saved' | 'expired' | { error: string } | { checksFailed: TakeCheck };

/**
 * What one task's tries came to, before the ledger has recorded saved files. `check`: the take was
 * judged before its sidecars were written (DownloadQueueDeps.checkBeforeSidecar), which carry it.
 */
type TriesOutcome = Exclude<DownloadOutcome, 'saved'> | { saved: SavedFile[]; check?: TakeCheck | null };

export interface DownloadQueueDeps {
  client: MediaGenClient;
  ledger: RunLedger & RecordReads & TakeLedger;
  clock: Clock;
  random: () => number;
  store: OutputStore;
  manifestName: string;
  /** Where an item's files go below outputDir (output.name), without extension. */
  nameOf: (itemId: string) => string;
  /** What a new file's sidecar says of its take being kept (provenance.ts, keptMark). */
  keptOf: (attempt: AttemptRecord) => Promise<boolean | null>;
  /** Provenance JSON beside every file (output.sidecars). */
  sidecars: boolean;
  concurrency: number;
  timeoutMs?: number;
  /** The job's files a run saved and was stopped before committing (saved-before-commit.ts). */
  savedBeforeCommit?: (task: DownloadTask) => Promise<SavedFile[] | null>;
  /** A task's files are written and recorded (not yet committed): what their size says is judged now. */
  filesWritten?: () => void;
  /** Runs a download in the background; the owner decides what a throw means. */
  background: (task: Promise<unknown>) => void;
  /** Called once per task; for 'saved', once the files and the item's `done` are committed together. */
  settled: (task: DownloadTask, outcome: DownloadOutcome) => Promise<void>;
  /**
   * Whether a take is checked before its sidecars are written, so each is written once with the
   * check: not when a check of your own reads the sidecar (it must be there first, then rewritten).
   */
  checkBeforeSidecar?: boolean;
  /** A saved take checked against its request (check-saved.ts); null: nothing checks it. */
  checkTake: (attempt: AttemptRecord, files: readonly SavedFile[]) => Promise<TakeCheck | null>;
  /** Called whenever a download slot frees. */
  freed: () => void;
  /** A save failed for a cause the same for every item (stop-rules.ts diskRefusal): the run stops. */
  diskRefused: (refusal: DiskRefuses) => void;
}

/**
 * Downloads with their own concurrency, earliest expires_at first: each p-limit slot, when it
 * comes free, takes the most urgent job waiting rather than the oldest.
 */
export class DownloadQueue {
  readonly #deps: DownloadQueueDeps;
  readonly #limit: LimitFunction;
  /** Waiting tasks by attempt id, and the same in order: earliest deadline, then arrival. */
  readonly #waiting = new Map<number, Waiting>();
  readonly #urgent = new MinHeap<Waiting>(
    (a, b) => a.deadline < b.deadline || (a.deadline === b.deadline && a.order < b.order),
  );
  #arrivals = 0;
  #active = 0;
  /** Saved files whose commit is awaited before their item is said done. */
  #settling = 0;
  #closed = false;

  constructor(deps: DownloadQueueDeps) {
    this.#deps = deps;
    this.#limit = pLimit(deps.concurrency);
  }

  get idle(): boolean {
    return this.#waiting.size === 0 && this.#active === 0 && this.#settling === 0;
  }

  get activeCount(): number {
    return this.#active;
  }

  get queuedCount(): number {
    return this.#waiting.size;
  }

  add(task: DownloadTask): void {
    if (this.#waiting.has(task.attempt.id)) return;
    const waiting = { task, deadline: deadline(task), order: this.#arrivals++ };
    this.#waiting.set(task.attempt.id, waiting);
    this.#urgent.push(waiting);
    this.#deps.background(this.#limit(() => this.#downloadMostUrgent()));
  }

  #takeMostUrgent(): DownloadTask | undefined {
    const best = this.#urgent.pop();
    if (best) this.#waiting.delete(best.task.attempt.id);
    return best?.task;
  }

  /** Starts no more downloads (a failed run): those under way finish; the next run saves the rest. */
  close(): void {
    this.#closed = true;
  }

  async #downloadMostUrgent(): Promise<void> {
    if (this.#closed) return;
    const task = this.#takeMostUrgent();
    if (!task) return;
    this.#active += 1;
    try {
      await this.#settle(task, await this.#download(task));
    } finally {
      this.#active -= 1;
      this.#deps.freed();
    }
  }

  async #settle(task: DownloadTask, outcome: TriesOutcome): Promise<void> {
    if (typeof outcome === 'object' && 'saved' in outcome) {
      const judged = 'check' in outcome;
      const check = judged
        ? (outcome.check ?? null)
        : await this.#deps.checkTake(task.attempt, outcome.saved);
      const failed = check?.outcome === 'failed';
      // The files, their check and the item's state commit as one step: one round trip and one
      // disk sync. A superseded take's item is not its to decide (DownloadTask.superseded).
      const update = failed
        ? { state: 'checks_failed' as const, errorCode: 'checks_failed', errorMessage: check?.reason ?? null }
        : { state: 'done' as const };
      const item = task.superseded ? undefined : { itemId: task.attempt.itemId, update };
      // No check at all (video_checks: false and no checks:): the files alone, as before checks.
      if (check === null) await this.#deps.ledger.recordFilesSaved(task.attempt.id, outcome.saved, item);
      else
        await this.#deps.ledger.recordCheckedFiles(task.attempt.id, outcome.saved, checkRecord(check), item);
      // Its size is learnt at once (size-check.ts): the next wave is judged before anything else is sent.
      this.#deps.filesWritten?.();
      // Said done only once the ledger holds it: a run killed now leaves nothing claimed unsaved.
      // The slot is free meanwhile; the group commits on its timer as it would anyway.
      this.#settling += 1;
      this.#deps.background(
        this.#deps.ledger
          .committed()
          // Its sidecars say the check once the ledger holds it, before the item is said done.
          .then(() => (judged ? undefined : this.#sidecarsWithCheck(task, outcome.saved, check)))
          // A commit that fails (a full disk) ends the run through `background`, the item unsaid: a
          // run with nothing else to do would otherwise wait for a settle that never comes.
          .then(() => this.#deps.settled(task, failed && check ? { checksFailed: check } : 'saved'))
          .finally(() => {
            this.#settling -= 1;
            this.#deps.freed();
          }),
      );
      return;
    }
    await this.#deps.settled(task, outcome);
  }

  /**
   * The take's sidecars rewritten (atomically) with its check: they were written before it, for the
   * checks of your own to read. Off the download slot, which is free by now.
   */
  async #sidecarsWithCheck(task: DownloadTask, files: readonly SavedFile[], check: TakeCheck | null) {
    if (!this.#deps.sidecars || check === null) return;
    const { ledger, manifestName, store } = this.#deps;
    const kept = await this.#deps.keptOf(task.attempt);
    await store.ensureSidecars(
      await sidecarFactsOf(ledger, manifestName, task.attempt, kept, shownCheck(checkRecord(check))),
      files,
    );
  }

  /** The files, each placed after any earlier take is preserved, with their sidecars (OutputStore.saveJob). */
  async #save(task: DownloadTask, job: Job, judged: { check?: TakeCheck | null }): Promise<StoreSaveOutcome> {
    const { client, ledger, store } = this.#deps;
    return store.saveJob({
      job,
      itemId: task.attempt.itemId,
      name: this.#deps.nameOf(task.attempt.itemId),
      beforePlace: (target, written) => beforePlacing(store, ledger, task.attempt, target, written),
      ...(task.superseded ? { take: task.attempt.take ?? 1 } : {}),
      refreshJob: async () => (await client.getJob(job.id)).data,
      sidecar: this.#deps.sidecars
        ? await sidecarFactsOf(
            ledger,
            this.#deps.manifestName,
            task.attempt,
            await this.#deps.keptOf(task.attempt),
            null, // Not checked yet: #sidecarsWithCheck adds it.
          )
        : null,
      ...(this.#deps.timeoutMs ? { timeoutMs: this.#deps.timeoutMs } : {}),
      ...(this.#deps.checkBeforeSidecar
        ? {
            judge: async (files: readonly SavedFile[]) => {
              judged.check = await this.#deps.checkTake(task.attempt, files);
              return judged.check && shownCheck(checkRecord(judged.check));
            },
          }
        : {}),
    });
  }

  async #download(task: DownloadTask): Promise<TriesOutcome> {
    const { client, clock, random } = this.#deps;
    const saved = await this.#deps.savedBeforeCommit?.(task);
    if (saved) return { saved };
    let job = task.job;
    for (let tries = 1; ; tries += 1) {
      const judged: { check?: TakeCheck | null } = {};
      const outcome = await this.#save(task, job, judged).catch((error: unknown) => ({
        kind: 'error' as const,
        message: error instanceof Error ? error.message : String(error),
        local: !(error instanceof ApiError || error instanceof ApiConnectionError),
        code: (error as { code?: unknown } | null)?.code,
      }));
      if (outcome.kind === 'saved') return { saved: outcome.files, ...judged };
      if (outcome.kind === 'expired') return 'expired';
      const refusal = outcome.local
        ? storeRefusal(typeof outcome.code === 'string' ? outcome.code : undefined, this.#deps.store.root)
        : null;
      if (refusal) {
        // Trying again soon cannot help: the item stays in flight and the re-run saves it.
        this.#deps.diskRefused(refusal);
        return { error: outcome.message };
      }
      const decision = decideDownloadRetry(tries, retryCause(outcome), random);
      if (decision.kind === 'give_up') return { error: outcome.message };
      await clock.sleep(decision.delayMs);
      // A fresh view gives fresh URLs and says whether the outputs still exist.
      job = await client
        .getJob(job.id)
        .then((answer) => answer.data)
        .catch(() => job);
    }
  }
}

interface Waiting {
  task: DownloadTask;
  /** expires_at, parsed once. */
  deadline: number;
  order: number;
}

/** What a failed save's retries are paced by: a store that did not answer is waited out longest. */
function retryCause(outcome: { local?: boolean; unreachable?: boolean }): DownloadRetryCause {
  if (outcome.unreachable) return 'store_unreachable';
  return outcome.local ? 'local' : 'network';
}

function deadline(task: DownloadTask): number {
  return task.job.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(task.job.expires_at);
}
