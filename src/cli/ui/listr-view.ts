import { Writable } from 'node:stream';
import {
  DefaultRenderer,
  Listr,
  ListrLogger,
  type ListrTask,
  type ListrTaskWrapper,
  ProcessOutput,
} from 'listr2';
import type { RunEvent, StopReason } from '../../index.js';
import { type OutcomeLine, RunViewState } from './run-view.js';

type Terminal = NodeJS.WritableStream & { columns?: number; rows?: number };
type Wrapper = ListrTaskWrapper<unknown, typeof PacedRenderer, typeof PacedRenderer>;

/** The most frames a second: enough to look alive. */
const REDRAW_EVERY_MS = 100;
/** A frame at least every second, however slow one is (the first one loads listr2's parts). */
const LONGEST_PAUSE_MS = 1000;
/** How often the tasks take in the state: events between are gathered, the counts with them. */
const REFRESH_EVERY_MS = 250;
/**
 * A frame costs milliseconds (listr2 measures every character's width), so the pause after one
 * is at least this many times what it took: drawing takes at most 0.7% of one core, whatever the pace.
 */
const PAUSE_PER_FRAME_COST = 150;
/** Lines at the end for what stopped the run: the failed items shown, "and N more", the budget, a stop. */
const OUTCOME_LINES = 8;

/**
 * listr2's own renderer, paced. listr2 redraws on every change of a title or an output; at 200
 * slots and 100 finishes a second that is hundreds of frames a second, so changes in between are
 * gathered into the next frame, and frames are further apart when each costs more.
 */
class PacedRenderer extends DefaultRenderer {
  /** Whether to draw is run-progress.ts's choice, made on the stream it is given, not on process.stdout. */
  static override nonTTY = true;
  #timer: NodeJS.Timeout | null = null;
  #nextAt = 0;

  override update(): void {
    if (this.#timer) return;
    const wait = this.#nextAt - performance.now();
    if (wait <= 0) {
      this.#draw();
      return;
    }
    this.#timer = setTimeout(() => this.#draw(), wait);
  }

  override end(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    super.end();
  }

  #draw(): void {
    this.#timer = null;
    const began = performance.now();
    super.update();
    const ended = performance.now();
    const pause = (ended - began) * PAUSE_PER_FRAME_COST;
    this.#nextAt = ended + Math.min(LONGEST_PAUSE_MS, Math.max(REDRAW_EVERY_MS, pause));
  }
}

/** Where listr2 would park stderr while it draws: nowhere, so --progress ndjson on stderr flows on. */
const noStderr = () =>
  new Writable({
    write: (_chunk, _encoding, done) => {
      done();
    },
  }) as unknown as NodeJS.WriteStream;

/**
 * `run` in a terminal: a listr2 task list with the phases a person thinks in. The service check
 * (done before the view starts, so it shows its answer), generating (counts, slots, money and
 * ETA in its title, the latest events under it, and one subtask per job in flight, as many as fit
 * the screen), and saving files. When the run ends, each failed item (a few) and what stopped the
 * run become failed or skipped subtasks of the generate phase.
 */
export class ListrRunView {
  readonly #state: RunViewState;
  readonly #now: () => number;
  readonly #listr: Listr<unknown, typeof PacedRenderer, typeof PacedRenderer>;
  readonly #lanes: Array<Wrapper | null>;
  readonly #phaseEnd: Promise<StopReason | null>;
  #endPhase: (stop: StopReason | null) => void = () => undefined;
  #generate: Wrapper | null = null;
  #save: Wrapper | null = null;
  #running: Promise<unknown> | null = null;
  #ticker: NodeJS.Timeout | null = null;
  #pending: NodeJS.Timeout | null = null;

  constructor(out: Terminal, options: { title: string; checked: string }, now: () => number = Date.now) {
    this.#now = now;
    this.#state = new RunViewState(options.title, now());
    this.#phaseEnd = new Promise((resolve) => {
      this.#endPhase = resolve;
    });
    // The frame: 1 check + 4 generate + the events + the lanes + 1 save, under the terminal's rows.
    const lanes = Math.max(1, Math.min(12, (out.rows ?? 24) - 16));
    this.#lanes = Array.from({ length: lanes }, () => null);
    this.#listr = new Listr<unknown, typeof PacedRenderer, typeof PacedRenderer>(
      [
        { title: options.checked, task: () => undefined },
        this.#generateTask(),
        {
          title: this.#state.saveTitle(),
          task: async (_ctx, task) => {
            this.#save = task;
            this.#refresh();
            await this.#phaseEnd;
            task.title = this.#state.saveTitle();
          },
        },
      ],
      {
        concurrent: true,
        exitOnError: false,
        // Ctrl-C is run's: the first drains, the second quits (listr2 would exit at once).
        registerSignalListeners: false,
        renderer: PacedRenderer,
        fallbackRendererCondition: false,
        silentRendererCondition: false,
        rendererOptions: {
          formatOutput: 'truncate',
          logger: new ListrLogger({
            processOutput: new ProcessOutput(out as NodeJS.WriteStream, noStderr()),
          }),
        },
      },
    );
  }

  /** Starts drawing; the phases run until finish(). */
  start(): void {
    this.#running = this.#listr.run();
    this.#ticker = setInterval(() => this.#refresh(), 1000);
    this.#ticker.unref();
  }

  /** The listr2 task list that draws the view (tests check that listr2 is what draws it). */
  get taskList(): Listr<unknown, typeof PacedRenderer, typeof PacedRenderer> {
    return this.#listr;
  }

  /** The run's start starts drawing; its end resolves once the last frame is on the screen. */
  handle(event: RunEvent): Promise<void> | undefined {
    switch (event.name) {
      case 'start':
        this.start();
        return;
      case 'item': {
        const { itemId, state, detail, counts } = event.payload;
        this.#state.itemChanged(itemId, state, detail, counts, this.#now());
        break;
      }
      case 'log':
        this.#state.log(event.payload.level, event.payload.message, this.#now());
        break;
      case 'progress':
        this.#state.progress(event.payload);
        break;
      case 'end':
        return this.finish(event.payload.stop);
      default:
        return;
    }
    this.#soon();
  }

  /**
   * The state changes with every event; the tasks take it in at most every REFRESH_EVERY_MS, all at
   * once, so a frame never shows an event without the counts that came with it.
   */
  #soon(): void {
    if (this.#pending) return;
    this.#pending = setTimeout(() => {
      this.#pending = null;
      this.#refresh();
    }, REFRESH_EVERY_MS);
    this.#pending.unref();
  }

  /** Ends every phase with how the run stopped, and resolves once the last frame is on the screen. */
  async finish(stop: StopReason | null): Promise<void> {
    if (this.#ticker) clearInterval(this.#ticker);
    if (this.#pending) clearTimeout(this.#pending);
    this.#ticker = null;
    this.#pending = null;
    this.#state.end();
    this.#refresh();
    this.#endPhase(stop);
    await this.#running;
  }

  #generateTask(): ListrTask<unknown, typeof PacedRenderer, typeof PacedRenderer> {
    const lanes = this.#lanes.map(
      (_, index): ListrTask<unknown, typeof PacedRenderer, typeof PacedRenderer> => ({
        task: async (_ctx, task) => {
          this.#lanes[index] = task;
          this.#refresh();
          await this.#phaseEnd;
          task.title = '';
        },
      }),
    );
    const outcome = Array.from(
      { length: OUTCOME_LINES },
      (_, index): ListrTask<unknown, typeof PacedRenderer, typeof PacedRenderer> => ({
        task: async (_ctx, task) => {
          const stop = await this.#phaseEnd;
          const line = this.#state.outcome(stop)[index];
          if (line) endAs(task, line);
        },
      }),
    );
    return {
      title: this.#state.generateTitle(this.#now()),
      task: (_ctx, task) => {
        this.#generate = task;
        this.#refresh();
        // Kept after the phase ends: the lanes are blank by then, and the outcome stays in view.
        return task.newListr([...lanes, ...outcome], {
          concurrent: true,
          exitOnError: false,
          rendererOptions: { collapseSubtasks: false },
        });
      },
    };
  }

  /**
   * Puts the state into the tasks' titles; listr2 draws them at its next frame. The latest events
   * are lines of the generate phase's title rather than its output: listr2 reads a title whenever
   * it draws, but keeps an output only from the moment it first drew the task.
   */
  #refresh(): void {
    const now = this.#now();
    const events = this.#state.events.map((event) => `${event.at}  ${event.text}`);
    setTitle(this.#generate, [this.#state.generateTitle(now), ...events].join('\n'));
    setTitle(this.#save, this.#state.saveTitle());
    const titles = this.#state.laneTitles(this.#lanes.length, now);
    this.#lanes.forEach((lane, index) => {
      setTitle(lane, titles[index] ?? '');
    });
  }
}

/** A title set to what it already says would still cost listr2 a redraw request. */
function setTitle(task: Wrapper | null, text: string): void {
  if (task && (task.title ?? '') !== text) task.title = text;
}

/** A failed item or a stop, as a listr2 task state: failed with the words, or skipped with them. */
function endAs(task: Wrapper, line: OutcomeLine): void {
  task.title = line.text;
  if (line.state === 'skipped') task.skip(line.text);
  else throw new Error(line.text);
}
