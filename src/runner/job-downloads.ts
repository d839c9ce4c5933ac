import pLimit, { type LimitFunction } from 'p-limit';
import type { Job } from '../api/schemas.js';
import { saveJobFiles } from '../downloads/save-job-files.js';
import type { AttemptRecord } from '../ledger/records.js';
import type { BatchRun } from './batch-run.js';
import { backoffDelay } from './policy.js';

export interface DownloadTask {
  attempt: AttemptRecord;
  job: Job;
}

const MAX_TRIES = 4;

/**
 * Downloads with their own concurrency, earliest expires_at first: each p-limit slot, when it
 * comes free, takes the most urgent job waiting rather than the oldest.
 */
export class JobDownloads {
  readonly #run: BatchRun;
  readonly #limit: LimitFunction;
  readonly #waiting = new Map<number, DownloadTask>();
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
    this.#waiting.set(task.attempt.id, task);
    void this.#limit(() => this.#downloadMostUrgent());
  }

  #takeMostUrgent(): DownloadTask | undefined {
    let best: DownloadTask | undefined;
    for (const task of this.#waiting.values()) {
      if (!best || deadline(task) < deadline(best)) best = task;
    }
    if (best) this.#waiting.delete(best.attempt.id);
    return best;
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
      }));
      if (outcome.kind === 'saved') {
        ledger.recordFilesSaved(task.attempt.id, outcome.files);
        this.#run.downloadFinished(task, 'saved');
        return;
      }
      if (outcome.kind === 'expired') {
        this.#run.downloadFinished(task, 'expired');
        return;
      }
      if (tries >= MAX_TRIES) {
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
