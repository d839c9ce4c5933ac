import type { ProgressSnapshot, RunEvent } from '../../index.js';
import { finishedOf, itemChangeLine, logLine, rateAndEta, summarize } from './progress-text.js';

/** A line per change would flood a log; one every few seconds still shows the run is alive. */
const SUMMARY_EVERY_MS = 5000;

/**
 * Plain log lines, for pipes and CI logs where no terminal UI can be drawn: the run's notices, a
 * line per item event (unless `itemLines` is off, `--no-item-lines`: a 40,000-item run wrote 80,061
 * of them), and at most every five seconds a summary with the pace and the time left.
 */
export class PlainLines {
  readonly #out: NodeJS.WritableStream;
  readonly #now: () => Date;
  readonly #itemLines: boolean;
  #lastSummary = '';
  #lastPrinted = Number.NEGATIVE_INFINITY;
  /** The first snapshot seen: the pace is measured from it. */
  #since: { atMs: number; finished: number } | null = null;

  constructor(out: NodeJS.WritableStream, now: () => Date = () => new Date(), itemLines = true) {
    this.#out = out;
    this.#now = now;
    this.#itemLines = itemLines;
  }

  handle(event: RunEvent): void {
    switch (event.name) {
      case 'item': {
        const { itemId, state, detail } = event.payload;
        if (this.#itemLines) this.#line(itemChangeLine(itemId, state, detail));
        break;
      }
      case 'log':
        this.#line(logLine(event.payload.level, event.payload.message));
        break;
      case 'progress':
        this.#progress(event.payload);
        break;
    }
  }

  #progress(snapshot: ProgressSnapshot): void {
    const now = { atMs: this.#now().getTime(), finished: finishedOf(snapshot.byState) };
    this.#since ??= now;
    const summary = summarize(snapshot);
    if (summary === this.#lastSummary || now.atMs - this.#lastPrinted < SUMMARY_EVERY_MS) return;
    this.#lastSummary = summary;
    this.#lastPrinted = now.atMs;
    const pace = rateAndEta(this.#since, now, snapshot.total);
    this.#line(pace === null ? summary : `${summary}; ${pace}`);
  }

  #line(text: string | null): void {
    if (text === null) return;
    this.#out.write(`[${this.#now().toISOString().slice(11, 19)}] ${text}\n`);
  }
}
