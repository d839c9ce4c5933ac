import {
  exitCodeOfOutcome,
  type ItemEvent,
  type LogEvent,
  type Outcome,
  type ProgressSnapshot,
  type RunEvent,
} from '../../index.js';
import { formatUsd } from '../../money.js';
import { itemChangeLine, logLine } from './progress-text.js';

/**
 * `run --progress ndjson`: one JSON object per line, for scripts and dashboards. Every line has
 * `event` and `at`; money is a six-decimal string, as in every JSON mediabatch writes.
 * See docs/commands.md for the events.
 */
export class NdjsonLines {
  readonly #out: NodeJS.WritableStream;
  readonly #now: () => Date;
  #lastProgress = '';

  constructor(out: NodeJS.WritableStream, now: () => Date = () => new Date()) {
    this.#out = out;
    this.#now = now;
  }

  handle(event: RunEvent): void {
    switch (event.name) {
      case 'start': // What `run` is about to do: the plan's summary line and totals.
        this.#write({ event: 'plan', summary: event.payload.plan });
        break;
      case 'item':
        this.#item(event.payload);
        break;
      case 'log':
        this.#log(event.payload);
        break;
      case 'progress':
        this.#progress(event.payload);
        break;
      case 'end': // The last line: how the run ended.
        this.#finished(event.payload.outcome);
        break;
    }
  }

  #finished(outcome: Outcome): void {
    this.#write({ event: 'finished', outcome, exit_code: exitCodeOfOutcome(outcome) });
  }

  #item({ itemId, state, detail }: ItemEvent): void {
    // The same events as the screen shows, with their fields apart.
    if (itemChangeLine(itemId, state, detail) === null) return;
    this.#write({ event: 'item', item: itemId, state, detail });
  }

  #log({ level, message }: LogEvent): void {
    if (logLine(level, message) === null) return;
    this.#write({ event: 'log', level, message });
  }

  #progress(snapshot: ProgressSnapshot): void {
    const fields = {
      total: snapshot.total,
      by_state: snapshot.byState,
      slots_in_use: snapshot.unfinished,
      slot_limit: snapshot.slotLimit,
      batch_slots_in_use: snapshot.batchInUse,
      downloads_active: snapshot.downloadsActive,
      downloads_queued: snapshot.downloadsQueued,
      unsaved_limit: snapshot.unsavedLimit,
      saving_first: snapshot.savingFirst,
      spent_usd: formatUsd(snapshot.spentMicros),
      budget_usd: snapshot.budgetMicros === null ? null : formatUsd(snapshot.budgetMicros),
      draining: snapshot.draining,
    };
    // The same numbers again say nothing new.
    const key = JSON.stringify(fields);
    if (key === this.#lastProgress) return;
    this.#lastProgress = key;
    this.#write({ event: 'progress', ...fields });
  }

  #write(fields: Record<string, unknown>): void {
    const { event, ...rest } = fields;
    this.#out.write(`${JSON.stringify({ event, at: this.#now().toISOString(), ...rest })}\n`);
  }
}
