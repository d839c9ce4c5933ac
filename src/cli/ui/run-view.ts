import type { ItemState, ProgressSnapshot, StopReason } from '../../index.js';
import { formatUsdHuman, humanUsd } from '../../money.js';
import { notFittingLine } from '../../render.js';
import { countsOwner, itemChangeLine, logLine, slotsText, spendOwner } from './progress-text.js';

/**
 * What `run`'s terminal view says, as plain data and words: pure, so every word and number a
 * person sees is tested without a terminal. Drawing it is listr2's job (`listr-view.ts`).
 */

export const RECENT_EVENTS = 8;
/** Failed items shown one per line at the end; the rest are counted (`status` lists them all). */
export const FAILED_SHOWN = 5;

export interface ViewEvent {
  /** HH:MM:SS, local to the run. */
  at: string;
  text: string;
}

type Counts = Readonly<Record<ItemState, number>>;

/** One line of the outcome: a listr2 task that fails with this message, or is skipped with it. */
export interface OutcomeLine {
  state: 'failed' | 'skipped';
  text: string;
}

const finishedOf = (c: Counts) => c.done + c.failed + c.budget_exceeded + c.expired + c.checks_failed;

const duration = (seconds: number) =>
  seconds >= 60 ? `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s` : `${seconds}s`;

/**
 * The view's state: counts, money, the jobs in flight, the latest events and the failed items.
 * The counts come with each event (the runner's state right after that change) or with a
 * snapshot, whichever is newer, so the counts never lag behind an event on the same screen.
 */
export class RunViewState {
  readonly title: string;
  readonly #startedAtMs: number;
  #counts: Counts | null = null;
  #snapshot: ProgressSnapshot | null = null;
  /** Items in flight, oldest first, with when they went; at most the slots (and resumed jobs). */
  readonly #inFlight = new Map<string, number>();
  readonly #events: ViewEvent[] = [];
  readonly #failed: Array<{ id: string; detail: string | null }> = [];
  /** The first item that did not fit the budget, and the run's words for it (budget-words.ts). */
  #overBudget: { id: string; words: string } | null = null;
  #failedCount = 0;
  #ended = false;
  #clockSecond = Number.NaN;
  #clockText = '';

  constructor(title: string, startedAtMs: number) {
    this.title = title;
    this.#startedAtMs = startedAtMs;
  }

  itemChanged(itemId: string, state: ItemState, detail: string | null, counts: Counts, nowMs: number): void {
    this.#counts = counts;
    if (state === 'in_flight') {
      if (!this.#inFlight.has(itemId)) this.#inFlight.set(itemId, nowMs);
    } else this.#inFlight.delete(itemId);
    if (state === 'budget_exceeded' && this.#overBudget === null && detail !== null) {
      this.#overBudget = { id: itemId, words: detail.replace(/^budget_exceeded: /, '') };
    }
    if (state === 'failed') {
      this.#failedCount += 1;
      if (this.#failed.length < FAILED_SHOWN) this.#failed.push({ id: itemId, detail });
    }
    this.#event(itemChangeLine(itemId, state, detail), nowMs);
  }

  log(level: 'info' | 'warn' | 'error', message: string, nowMs: number): void {
    this.#event(logLine(level, message), nowMs);
  }

  /** HH:MM:SS of an event; the same second is formatted once (a hundred events a second is usual). */
  #clock(nowMs: number): string {
    const second = Math.floor(nowMs / 1000);
    if (second !== this.#clockSecond) {
      this.#clockSecond = second;
      this.#clockText = new Date(nowMs).toTimeString().slice(0, 8);
    }
    return this.#clockText;
  }

  progress(snapshot: ProgressSnapshot): void {
    this.#snapshot = snapshot;
    this.#counts = snapshot.byState;
  }

  /** The latest events, oldest first, each once. */
  get events(): readonly ViewEvent[] {
    return this.#events;
  }

  #event(text: string | null, nowMs: number): void {
    if (text === null) return;
    this.#events.push({ at: this.#clock(nowMs), text });
    if (this.#events.length > RECENT_EVENTS) this.#events.splice(0, this.#events.length - RECENT_EVENTS);
  }

  /** The generate phase's title: progress and ETA, the counts, then slots and money. */
  generateTitle(nowMs: number): string {
    const c = this.#counts;
    const s = this.#snapshot;
    if (!c || !s) return `Generate ${this.title}: starting`;
    const finished = finishedOf(c);
    const head = this.#ended ? `Generated ${this.title}` : `Generate ${this.title}`;
    const lines = [
      `${head}${countsOwner(s)}: ${finished}/${s.total} finished, ${this.#eta(finished, s.total, nowMs)}`,
      `done ${c.done} · failed ${c.failed}${c.checks_failed ? ` · failed checks ${c.checks_failed}` : ''} · over budget ${c.budget_exceeded} · expired ${c.expired} · in flight ${c.in_flight} · pending ${c.pending}`,
      `${slotsText(s, true)} · ${money(s)}${spendOwner(s)}`,
    ];
    if (s.draining && !this.#ended)
      lines.push(
        'stopping: no new submissions; jobs in flight are finished and saved (Ctrl-C again quits now)',
      );
    return lines.join('\n');
  }

  /** Time left at the pace so far, or the time taken once every item is finished or the phase ended. */
  #eta(finished: number, total: number, nowMs: number): string {
    const elapsedMs = nowMs - this.#startedAtMs;
    if (finished >= total || this.#ended) return `took ${duration(Math.round(elapsedMs / 1000))}`;
    if (finished === 0 || elapsedMs < 1000) return 'ETA -';
    return `ETA ${duration(Math.round(((total - finished) * elapsedMs) / finished / 1000))}`;
  }

  /** The generate phase is over: the ETA becomes the time it took. */
  end(): void {
    this.#ended = true;
  }

  /** The save phase's title: items whose files are saved, and the downloads still going. */
  saveTitle(): string {
    const done = this.#counts?.done ?? 0;
    const s = this.#snapshot;
    const busy = s ? s.downloadsActive + s.downloadsQueued : 0;
    if (this.#ended) return `Saved the files of ${done} item${done === 1 ? '' : 's'}`;
    if (!s || busy === 0) return `Save files: ${done} item${done === 1 ? '' : 's'} saved, downloads idle`;
    return `Save files: ${done} item${done === 1 ? '' : 's'} saved, ${s.downloadsActive} downloading, ${s.downloadsQueued} queued`;
  }

  /**
   * One line per job in flight, oldest first, at most `lanes` of them: the last says how many
   * more there are, so a batch of 100,000 items never asks for more lines than the screen has.
   */
  laneTitles(lanes: number, nowMs: number): string[] {
    const lines: string[] = [];
    const shown = this.#inFlight.size > lanes ? lanes - 1 : lanes;
    for (const [id, since] of this.#inFlight) {
      if (lines.length >= shown) break;
      lines.push(`${id}: in flight ${duration(Math.max(0, Math.round((nowMs - since) / 1000)))}`);
    }
    const more = this.#inFlight.size - lines.length;
    if (more > 0) lines.push(`… and ${more} more in flight`);
    return lines;
  }

  /** How the run ended, line by line: each failed item (a few), what stopped the run. */
  outcome(stop: StopReason | null): OutcomeLine[] {
    const lines: OutcomeLine[] = this.#failed.map(({ id, detail }) => ({
      state: 'failed',
      text: `${id}: failed${detail ? ` (${detail})` : ''}`,
    }));
    const more = this.#failedCount - this.#failed.length;
    if (more > 0) lines.push({ state: 'failed', text: `… and ${more} more failed (mediabatch status)` });
    const over = this.#counts?.budget_exceeded ?? 0;
    if (over > 0)
      lines.push({
        state: 'failed',
        text: `stopped by the budget: ${
          this.#overBudget
            ? notFittingLine(over, 'did not fit', this.#overBudget.id, this.#overBudget.words)
            : `${over} item${over === 1 ? '' : 's'} did not fit in budget_usd`
        }`,
      });
    const said = stop ? STOP_WORDS[stop.kind]?.(stop as never) : undefined;
    if (said) lines.push(said);
    return lines;
  }
}

function money(snapshot: ProgressSnapshot): string {
  const spent = formatUsdHuman(snapshot.spentMicros);
  if (snapshot.budgetMicros === null) return `spent ${spent} (no budget)`;
  const share =
    snapshot.budgetMicros === 0 ? 100 : Math.floor((snapshot.spentMicros * 100) / snapshot.budgetMicros);
  return `spent ${spent} of ${formatUsdHuman(snapshot.budgetMicros)} (${share}%)`;
}

/** Each stop as the view's last line; the summary under the view says what to do about it. */
const STOP_WORDS: { [K in StopReason['kind']]: (stop: Extract<StopReason, { kind: K }>) => OutcomeLine } = {
  draining: () => ({
    state: 'skipped',
    text: 'stopped by Ctrl-C: nothing new was submitted; jobs in flight were finished and saved',
  }),
  account_refused: (stop) => ({
    state: 'failed',
    text: `stopped: the service refused the account (${stop.code})`,
  }),
  service_route: () => ({ state: 'failed', text: 'stopped: the service has no route for a request' }),
  ledger_disagrees: (stop) => ({
    state: 'failed',
    text: `stopped: the service does not know ${stop.jobs.length} job(s) this ledger holds`,
  }),
  definition_differs: (stop) => ({
    state: 'failed',
    text: `stopped: the batch was redefined (revision ${stop.revision}); nothing new was submitted, jobs in flight were saved`,
  }),
  stop_loss: (stop) => ({
    state: 'failed',
    text: `stopped: ${stop.items.length} items in a row failed with ${stop.signature}`,
  }),
  disk_refuses: (stop) => ({
    state: 'failed',
    text: `stopped: files cannot be saved in ${stop.folder} (${stop.code}); nothing new was submitted`,
  }),
};

/** What the pre-flight found, in the words of the view's first task (it ran before the view). */
export type ServiceAnswer =
  | { kind: 'answered'; balanceUsd: string; active: number; limit: number }
  | { kind: 'slow' }
  | { kind: 'refused' };

export function checkTitle(identity: string, answer: ServiceAnswer): string {
  if (answer.kind === 'slow')
    return `Checked the service at ${identity}: slow to answer; going on (unanswered requests are resent with the same key)`;
  if (answer.kind === 'refused') return `Checked the service at ${identity}: it refused the account`;
  return `Checked the service at ${identity}: balance ${humanUsd(answer.balanceUsd)}, ${answer.active}/${answer.limit} slots busy`;
}
