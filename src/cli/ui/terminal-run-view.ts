import {
  exitCodeOfOutcome,
  type ItemState,
  type RunEvent,
  type RunHandle,
  type Warning,
} from '../../index.js';
import { renderRunGallery } from '../../render.js';
import { type RunProgress, runProgress } from './run-progress.js';
import { checkTitle } from './run-view.js';
import { formatRunSummary } from './summary.js';

/** The terminal a run is drawn on; `exit` ends the process (a second Ctrl-C). */
interface Terminal {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** The working folder, from which the gallery's path is shown. */
  cwd: string;
  exit: (code: number) => never;
}

/** The run in a terminal: words on stdout (stderr with --json), the live view or plain lines. */
export class TerminalRunView {
  #progress: RunProgress | null = null;
  #ended: Promise<void> | null = null;
  #counts: Record<ItemState, number> | null = null;

  constructor(
    handle: RunHandle,
    readonly values: { json: boolean; progress?: string | undefined; 'no-item-lines'?: boolean },
    readonly io: Terminal,
    readonly title: string,
    warn: (warning: Warning) => void,
    /** What the library said (a notice, a log line), in the CLI's words. */
    readonly say: (said: { code?: string; message: string }) => string,
  ) {
    const words = values.json ? io.stderr : io.stdout;
    handle.on('sandbox', ({ baseUrl, ledgerPath, outputDir }) => {
      if (!values.json)
        io.stdout.write(
          `Running against the embedded sandbox at ${baseUrl}: placeholder videos, no real spend.\n` +
            `  ledger ${ledgerPath}, files in ${outputDir}\n`,
        );
    });
    handle.on('notice', (notice) => words.write(say(notice)));
    handle.on('warning', warn);
    handle.on('output', (text) => io.stderr.write(text));
    handle.on('start', (payload) => this.#start({ name: 'start', payload }));
    handle.on('item', (payload) => {
      this.#counts = payload.counts;
      this.#show({ name: 'item', payload });
    });
    handle.on('progress', (payload) => this.#show({ name: 'progress', payload }));
    handle.on('log', (log) => this.#show({ name: 'log', payload: { level: log.level, message: say(log) } }));
    // The library drains; what a second Ctrl-C does is the terminal's to say (the live view says it).
    handle.on('stop', ({ reason }) => {
      if (reason.kind === 'draining' && !values.json && this.#progress?.live == null)
        io.stdout.write('  (Ctrl-C again quits now; the next run saves what is still in flight)\n');
    });
    handle.on('end', (payload) => {
      this.#ended = this.#end({ name: 'end', payload });
    });
  }

  /** Each view of the run reads the event, as the run emitted it (a log line in the CLI's words). */
  #show(event: RunEvent): void {
    for (const view of this.#progress?.views ?? []) void view.handle(event);
  }

  #start(event: Extract<RunEvent, { name: 'start' }>): void {
    const { plan, checked } = event.payload;
    if (!this.values.json) this.io.stdout.write(`${plan}\n`);
    this.#progress = runProgress(
      {
        json: this.values.json,
        ndjson: this.values.progress === 'ndjson',
        itemLines: !this.values['no-item-lines'],
        title: this.title,
        checked: checkTitle(checked.service, checked.answer),
      },
      this.io,
    );
    this.#show(event);
  }

  async #end(event: Extract<RunEvent, { name: 'end' }>): Promise<void> {
    const progress = this.#progress;
    this.#progress = null;
    // One view after the other: the live view's last frame is drawn before the NDJSON's last line.
    for (const view of progress?.views ?? []) await view.handle(event);
    const result = event.payload;
    const selected = result.selected === null ? null : new Set(result.selected);
    // The gallery: with --json a field of the document (stderr stays the events' alone), else the
    // last line, what to open next.
    const gallery = result.gallery?.written ?? null;
    this.io.stdout.write(
      this.values.json
        ? `${JSON.stringify({ ...result.status, ledger: undefined, gallery }, null, 2)}\n`
        : this.say({
            message: formatRunSummary(
              result.status,
              result.stop,
              result.ledgerPath,
              selected,
              result.heldBack,
            ),
          }),
    );
    if (!this.values.json) this.io.stdout.write(renderRunGallery(result, this.io.cwd));
  }

  /** Leaves the terminal clean: the summary written, or the live view ended under an error. */
  async close(): Promise<void> {
    if (this.#ended !== null) return this.#ended;
    await this.#progress?.live?.finish(null);
  }

  /** A second Ctrl-C: where things stand, how to go on, and the process ends. */
  quitNow(rerun: string): never {
    const counts = this.#counts;
    const where = counts
      ? `${counts.done} done, ${counts.in_flight} in flight, ${counts.pending} pending`
      : 'nothing submitted yet';
    this.io.stderr.write(
      `\nmediabatch run: stopped at once (${where}). The ledger is consistent: jobs in flight go on at the ` +
        `service and are saved, never paid again, by the next run: ${rerun}\n`,
    );
    return this.io.exit(exitCodeOfOutcome('interrupted'));
  }
}
