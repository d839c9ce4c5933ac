import pLimit, { type LimitFunction } from 'p-limit';
import { ApiConnectionError, ApiError } from '../api/errors.js';
import type { Job } from '../api/schemas.js';
import { saveJobFiles } from '../downloads/save-job-files.js';
import type { AttemptRecord } from '../ledger/records.js';
import type { BatchRun } from './batch-run.js';
import { backoffDelay } from './policy.js';

export interface DownloadTask {
  attempt: AttemptRecord;
  job: Job;
}

/** Tries per download when our own disk fails (full, unwritable): the user has to act. */
const MAX_TRIES = 4;
/** Tries when the transfer fails (cut, timeout, outage): the output is still there, so persist. */
const MAX_NETWORK_TRIES = 10;

/**
 * Downloads with their own concurrency, earliest expires_at first: each p-limit slot, when it
 * comes free, takes the most urgent job waiting rather than the oldest.
 */
export class JobDownloads {
  readonly #run: BatchRun;
  readonly #limit: LimitFunction;
  /** Waiting tasks with their deadline, parsed once: a scan per download must stay cheap. */
  readonly #waiting = new Map<number, { task: DownloadTask; deadline: number }>();
  #active = 0;

  constructor(run: BatchRun, concurrency: number) {
    this.#run = run;
    this.#limit = pLimit(concurrency);
  }

  get idle(): boolean {
    return this.#waiting.size === 0 && this.#active === 0;
  }

  get activeCount(): number {
    return this.#active;
  }

  get queuedCount(): number {
    return this.#waiting.size;
  }

  add(task: DownloadTask): void {
    if (this.#waiting.has(task.attempt.id)) return;
    this.#waiting.set(task.attempt.id, { task, deadline: deadline(task) });
    this.#run.background(this.#limit(() => this.#downloadMostUrgent()));
  }

  #takeMostUrgent(): DownloadTask | undefined {
    let best: { task: DownloadTask; deadline: number } | undefined;
    for (const waiting of this.#waiting.values()) {
      if (!best || waiting.deadline < best.deadline) best = waiting;
    }
    if (best) this.#waiting.delete(best.task.attempt.id);
    return best?.task;
  }

  async #downloadMostUrgent(): Promise<void> {
    const task = this.#takeMostUrgent();
    if (!task) return;
    this.#active += 1;
    try {
      await this.#download(task);
    } finally {
      this.#active -= 1;
      this.#run.wake();
    }
  }

  async #download(task: DownloadTask): Promise<void> {
    const { client, ledger, manifest, clock, random } = this.#run.deps;
    let job = task.job;
    for (let tries = 1; ; tries += 1) {
      const outcome = await saveJobFiles(job, {
        outputDir: manifest.outputDir,
        itemId: task.attempt.itemId,
        refreshJob: async () => (await client.getJob(job.id)).data,
        ...(this.#run.options.downloadTimeoutMs ? { timeoutMs: this.#run.options.downloadTimeoutMs } : {}),
      }).catch((error: unknown) => ({
        kind: 'error' as const,
        message: error instanceof Error ? error.message : String(error),
        local: !(error instanceof ApiError || error instanceof ApiConnectionError),
      }));
      if (outcome.kind === 'saved') {
        // The files and the item's `done` commit as one transaction: one disk sync, not two.
        ledger.atomically(() => {
          ledger.recordFilesSaved(task.attempt.id, outcome.files);
          this.#run.downloadFinished(task, 'saved');
        });
        return;
      }
      if (outcome.kind === 'expired') {
        this.#run.downloadFinished(task, 'expired');
        return;
      }
      if (tries >= (outcome.local ? MAX_TRIES : MAX_NETWORK_TRIES)) {
        this.#run.downloadFinished(task, { error: outcome.message });
        return;
      }
      await clock.sleep(backoffDelay(tries, random, { baseMs: 500, capMs: 10_000 }));
      // A fresh view gives fresh URLs and says whether the outputs still exist.
      job = await client
        .getJob(job.id)
        .then((answer) => answer.data)
        .catch(() => job);
    }
  }
}

function deadline(task: DownloadTask): number {
  return task.job.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(task.job.expires_at);
}
