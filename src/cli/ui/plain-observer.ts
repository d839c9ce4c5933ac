import type { ItemState, ProgressSnapshot } from '../../index.js';
import type { RunObserver } from '../../render.js';
import { itemChangeLine, logLine, summarize } from './progress-text.js';

/** Plain log lines, for pipes and CI logs where no terminal UI can be drawn. */
export class PlainObserver implements RunObserver {
  readonly #out: NodeJS.WritableStream;
  readonly #now: () => Date;
  #lastSummary = '';
  #lastPrinted = 0;

  constructor(out: NodeJS.WritableStream, now: () => Date = () => new Date()) {
    this.#out = out;
    this.#now = now;
  }

  itemChanged(itemId: string, state: ItemState, detail: string | null): void {
    this.#line(itemChangeLine(itemId, state, detail));
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    this.#line(logLine(level, message));
  }

  progress(snapshot: ProgressSnapshot): void {
    const summary = summarize(snapshot);
    // A line per change would flood a log; one every few seconds still shows the run is alive.
    const now = this.#now().getTime();
    if (summary === this.#lastSummary || now - this.#lastPrinted < 5000) return;
    this.#lastSummary = summary;
    this.#lastPrinted = now;
    this.#line(summary);
  }

  #line(text: string | null): void {
    if (text === null) return;
    this.#out.write(`[${this.#now().toISOString().slice(11, 19)}] ${text}\n`);
  }
}
