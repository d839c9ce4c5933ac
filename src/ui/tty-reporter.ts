import type { ItemState } from '../ledger/records.js';
import type { ProgressSnapshot, RunReporter } from '../runner/reporter.js';
import { type LiveState, pushEvent, renderFrame } from './live-panel.js';
import { itemChangeLine, logLine } from './progress-text.js';

type Terminal = NodeJS.WritableStream & { columns?: number; rows?: number };

const REDRAW_EVERY_MS = 100;
// CSI sequences: cursor to the start of the line N lines up; erase the line; erase below.
const up = (lines: number) => (lines > 0 ? `\u001b[${lines}F` : '');
const ERASE_LINE = '\u001b[2K';
const ERASE_BELOW = '\u001b[J';

/**
 * The live view in a terminal: one frame (the panel and the recent events) redrawn in place.
 * Each frame overwrites exactly the lines the last one drew, and no line is wider than the
 * terminal, so nothing wraps and no event is ever drawn twice on the screen.
 */
export class TtyReporter implements RunReporter {
  readonly #out: Terminal;
  readonly #now: () => number;
  readonly #state: LiveState;
  #drawn = 0;
  #timer: NodeJS.Timeout | null = null;
  #ticker: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(out: Terminal, title: string, now: () => number = Date.now) {
    this.#out = out;
    this.#now = now;
    this.#state = { title, startedAtMs: now(), snapshot: null, events: [] };
    this.#draw();
    // The ETA moves even when nothing happens.
    this.#ticker = setInterval(() => this.#schedule(), 1000);
    this.#ticker.unref();
  }

  itemChanged(itemId: string, state: ItemState, detail: string | null): void {
    this.#event(itemChangeLine(itemId, state, detail));
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    this.#event(logLine(level, message));
  }

  progress(snapshot: ProgressSnapshot): void {
    this.#state.snapshot = snapshot;
    this.#schedule();
  }

  /** Draws the last frame and leaves it on the screen, the cursor below it. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#ticker) clearInterval(this.#ticker);
    this.#draw();
  }

  #event(text: string | null): void {
    if (text === null) return;
    const at = new Date(this.#now()).toTimeString().slice(0, 8);
    pushEvent(this.#state.events, { at, text });
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#draw();
    }, REDRAW_EVERY_MS);
    this.#timer.unref();
  }

  #draw(): void {
    const lines = renderFrame(this.#state, this.#now(), this.#out.columns ?? 80, this.#out.rows ?? 24);
    const body = lines.map((line) => `${ERASE_LINE}${line}\n`).join('');
    this.#out.write(`${up(this.#drawn)}${body}${ERASE_BELOW}`);
    this.#drawn = lines.length;
  }
}
