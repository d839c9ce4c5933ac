import { Listr, type ListrTaskWrapper } from 'listr2';
import type { ItemState } from '../ledger/records.js';
import type { ProgressSnapshot, RunReporter } from '../runner/reporter.js';
import { itemChangeLine, logLine, summarize } from './progress-text.js';

type Wrapper = ListrTaskWrapper<unknown, never, never>;

/**
 * The interactive progress view: one live task whose title carries the counts, slots, spend,
 * download progress and an ETA, and whose output bar shows the latest events.
 */
export class ListrReporter implements RunReporter {
  readonly #now: () => number;
  readonly #started: number;
  readonly #lines: string[] = [];
  #task: Wrapper | null = null;
  #finish: (() => void) | null = null;
  #done: Promise<unknown> = Promise.resolve();
  #title = 'starting';

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#started = now();
  }

  start(title: string): void {
    this.#title = title;
    const finished = new Promise<void>((resolve) => {
      this.#finish = resolve;
    });
    const list = new Listr(
      [
        {
          title,
          task: async (_ctx, task) => {
            this.#task = task as unknown as Wrapper;
            await finished;
          },
          rendererOptions: { outputBar: 6, persistentOutput: false },
        },
      ],
      { registerSignalListeners: false, exitOnError: false, rendererOptions: { collapseSubtasks: false } },
    );
    this.#done = list.run().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.#finish?.();
    await this.#done;
  }

  itemChanged(itemId: string, state: ItemState, detail: string | null): void {
    this.#push(itemChangeLine(itemId, state, detail));
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    this.#push(logLine(level, message));
  }

  progress(snapshot: ProgressSnapshot): void {
    if (!this.#task) return;
    this.#task.title = `${this.#title}: ${summarize(snapshot)}${this.#eta(snapshot)}`;
  }

  #eta(snapshot: ProgressSnapshot): string {
    const { byState } = snapshot;
    const finished = byState.done + byState.failed + byState.budget_exceeded + byState.expired;
    const elapsed = this.#now() - this.#started;
    if (finished === 0 || finished >= snapshot.total || elapsed < 1000) return '';
    const seconds = Math.round(((snapshot.total - finished) * elapsed) / finished / 1000);
    return `, ETA ${seconds >= 60 ? `${Math.floor(seconds / 60)}m${seconds % 60}s` : `${seconds}s`}`;
  }

  #push(line: string | null): void {
    if (line === null) return;
    this.#lines.push(line);
    if (this.#lines.length > 6) this.#lines.shift();
    if (this.#task) this.#task.output = this.#lines.join('\n');
  }
}
