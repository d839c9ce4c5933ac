import type { ItemState } from '../ledger/records.js';
import { formatUsd } from '../money.js';
import type { ProgressSnapshot, RunReporter } from '../runner/reporter.js';

/** Plain log lines, for pipes and CI logs where no terminal UI can be drawn. */
export class PlainReporter implements RunReporter {
  readonly #out: NodeJS.WritableStream;
  readonly #now: () => Date;
  #lastSummary = '';
  #lastPrinted = 0;

  constructor(out: NodeJS.WritableStream, now: () => Date = () => new Date()) {
    this.#out = out;
    this.#now = now;
  }

  itemChanged(itemId: string, state: ItemState, detail: string | null): void {
    if (state === 'pending' && detail === null) return;
    this.#line(`${itemId}: ${state.replace('_', ' ')}${detail ? ` (${detail})` : ''}`);
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    if (level === 'info' && message.startsWith('polled:')) return;
    this.#line(level === 'info' ? message : `${level}: ${message}`);
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

  #line(text: string): void {
    this.#out.write(`[${this.#now().toISOString().slice(11, 19)}] ${text}\n`);
  }
}

export function summarize(snapshot: ProgressSnapshot): string {
  const { byState } = snapshot;
  const finished = byState.done + byState.failed + byState.budget_exceeded + byState.expired;
  const budget = snapshot.budgetMicros === null ? '' : ` of ${formatUsd(snapshot.budgetMicros)}`;
  const parts = [
    `${finished}/${snapshot.total} finished`,
    `${byState.done} done`,
    byState.failed ? `${byState.failed} failed` : '',
    byState.budget_exceeded ? `${byState.budget_exceeded} over budget` : '',
    byState.expired ? `${byState.expired} expired` : '',
    `${snapshot.unfinished}/${snapshot.slotLimit} slots in use`,
    snapshot.downloadsActive + snapshot.downloadsQueued
      ? `${snapshot.downloadsActive + snapshot.downloadsQueued} downloading`
      : '',
    `spent $${formatUsd(snapshot.spentMicros)}${budget}`,
    snapshot.draining ? 'draining' : '',
  ];
  return parts.filter(Boolean).join(', ');
}
