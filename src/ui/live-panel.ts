import { formatUsdHuman } from '../money.js';
import type { ProgressSnapshot } from '../runner/reporter.js';

/**
 * The live view's content as plain data and lines: pure, so what a terminal shows is tested
 * without one. Drawing it in place is `tty-reporter.ts`'s job.
 */

export const RECENT_EVENTS = 8;

export interface LiveEvent {
  /** HH:MM:SS, local to the run. */
  at: string;
  text: string;
}

export interface LiveState {
  title: string;
  startedAtMs: number;
  snapshot: ProgressSnapshot | null;
  /** The latest events, oldest first, at most RECENT_EVENTS. */
  events: LiveEvent[];
}

/** Adds an event to the rolling list: each event enters once and leaves when it is old. */
export function pushEvent(events: LiveEvent[], event: LiveEvent): void {
  events.push(event);
  if (events.length > RECENT_EVENTS) events.splice(0, events.length - RECENT_EVENTS);
}

function finishedOf(snapshot: ProgressSnapshot): number {
  const { byState } = snapshot;
  return byState.done + byState.failed + byState.budget_exceeded + byState.expired;
}

const duration = (seconds: number) =>
  seconds >= 60 ? `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s` : `${seconds}s`;

/** Time left at the pace so far, or the time taken once every item is finished. */
function eta(snapshot: ProgressSnapshot, elapsedMs: number): string {
  const finished = finishedOf(snapshot);
  if (finished >= snapshot.total) return `took ${duration(Math.round(elapsedMs / 1000))}`;
  if (finished === 0 || elapsedMs < 1000) return 'ETA -';
  return `ETA ${duration(Math.round(((snapshot.total - finished) * elapsedMs) / finished / 1000))}`;
}

function bar(done: number, total: number, width: number): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

function money(snapshot: ProgressSnapshot): string {
  const spent = formatUsdHuman(snapshot.spentMicros);
  if (snapshot.budgetMicros === null) return `spent ${spent} (no budget)`;
  const share =
    snapshot.budgetMicros === 0 ? 100 : Math.floor((snapshot.spentMicros * 100) / snapshot.budgetMicros);
  return `spent ${spent} of ${formatUsdHuman(snapshot.budgetMicros)} (${share}%)`;
}

function panel(state: LiveState, nowMs: number): string[] {
  const s = state.snapshot;
  if (!s) return [`${state.title}  starting...`];
  const finished = finishedOf(s);
  const b = s.byState;
  const downloads =
    s.downloadsActive + s.downloadsQueued === 0
      ? 'downloads idle'
      : `downloads ${s.downloadsActive} active, ${s.downloadsQueued} queued`;
  return [
    `${state.title}  ${bar(finished, s.total, 24)}  ${finished}/${s.total} finished  ${eta(s, nowMs - state.startedAtMs)}`,
    `  done ${b.done}   failed ${b.failed}   over budget ${b.budget_exceeded}   expired ${b.expired}   in flight ${b.in_flight}   pending ${b.pending}`,
    `  slots ${s.unfinished}/${s.slotLimit} in use   ${downloads}   ${money(s)}`,
    ...(s.draining
      ? ['  stopping: no new submissions; jobs in flight are finished and saved (Ctrl-C again quits now)']
      : []),
  ];
}

/**
 * Every line of one frame, each cut to the terminal's width so that none wraps, and no more lines
 * than the terminal has rows (a frame taller than the screen could not be redrawn in place).
 */
export function renderFrame(state: LiveState, nowMs: number, columns: number, rows = 40): string[] {
  const top = panel(state, nowMs);
  const room = Math.max(0, rows - top.length - 2);
  const shown = room === 0 ? [] : state.events.slice(-room);
  const lines = [
    ...top,
    state.events.length === 0 ? 'recent: nothing yet' : 'recent:',
    ...shown.map((event) => `  ${event.at}  ${event.text}`),
  ];
  // One column spare: a line exactly as wide as the terminal wraps on some terminals.
  const width = Math.max(20, columns - 1);
  return lines.map((line) => (line.length > width ? `${line.slice(0, width - 1)}…` : line));
}
