import { exitCodeOfOutcome, type ItemState, type Outcome, type ProgressSnapshot } from '../../index.js';
import { formatUsd } from '../../money.js';
import type { RunObserver } from '../../render.js';
import { itemChangeLine, logLine } from './progress-text.js';

/**
 * `run --progress ndjson`: one JSON object per line, for scripts and dashboards. Every line has
 * `event` and `at`; money is a six-decimal string, as in every JSON mediabatch writes.
 * See docs/commands.md for the events.
 */
export class NdjsonObserver implements RunObserver {
  readonly #out: NodeJS.WritableStream;
  readonly #now: () => Date;
  #lastProgress = '';

  constructor(out: NodeJS.WritableStream, now: () => Date = () => new Date()) {
    this.#out = out;
    this.#now = now;
  }

  /** What `run` is about to do: the plan's summary line and totals. */
  plan(summary: string): void {
    this.#write({ event: 'plan', summary });
  }

  itemChanged(itemId: string, state: ItemState, detail: string | null): void {
    // The same events as the screen shows, with their fields apart.
    if (itemChangeLine(itemId, state, detail) === null) return;
    this.#write({ event: 'item', item: itemId, state, detail });
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    if (logLine(level, message) === null) return;
    this.#write({ event: 'log', level, message });
  }

  progress(snapshot: ProgressSnapshot): void {
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

  /** The last line: how the run ended. */
  finished(outcome: Outcome): void {
    this.#write({ event: 'finished', outcome, exit_code: exitCodeOfOutcome(outcome) });
  }

  #write(fields: Record<string, unknown>): void {
    const { event, ...rest } = fields;
    this.#out.write(`${JSON.stringify({ event, at: this.#now().toISOString(), ...rest })}\n`);
  }
}

/** Several observers as one: the screen and the NDJSON stream both hear every event. */
export function bothObservers(first: RunObserver, second: RunObserver): RunObserver {
  return {
    itemChanged: (itemId, state, detail, counts) => {
      first.itemChanged(itemId, state, detail, counts);
      second.itemChanged(itemId, state, detail, counts);
    },
    log: (level, message) => {
      first.log(level, message);
      second.log(level, message);
    },
    progress: (snapshot) => {
      first.progress(snapshot);
      second.progress(snapshot);
    },
  };
}
