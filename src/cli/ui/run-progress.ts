import type { RunEvent } from '../../index.js';
import { ListrRunView } from './listr-view.js';
import { NdjsonLines } from './ndjson-lines.js';
import { PlainLines } from './plain-lines.js';

/** The terminal a run is shown on. */
interface Terminal {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** A view of a run: it reads each event as the run emits it; the end's promise, its last frame drawn. */
export interface RunEventView {
  handle(event: RunEvent): void | Promise<void>;
}

/** How a run shows itself: the views its events go to, in order, and the live view among them. */
export interface RunProgress {
  /** The screen's view first, so the live view's last frame is drawn before the NDJSON's last line. */
  views: RunEventView[];
  /** The live view, to be finished under an error (when no end came). */
  live: ListrRunView | null;
}

/** A set variable counts, except the empty string and the usual words for "no". */
const isSet = (value: string | undefined) =>
  value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';

/**
 * The live view (listr2) only in a terminal, outside CI and without NO_COLOR: anywhere else the
 * plain lines, which a log keeps readable. With --json only errors, on stderr; `--progress ndjson`
 * adds one JSON event per line on stderr (and then owns stderr).
 */
export function runProgress(
  options: {
    json: boolean;
    ndjson: boolean;
    title: string;
    checked: string;
    /** Plain lines: a line per item event (off with --no-item-lines). */
    itemLines?: boolean;
  },
  io: Terminal,
): RunProgress {
  const ndjson = options.ndjson ? new NdjsonLines(io.stderr) : null;
  const live =
    !options.json && io.stdout.isTTY && !isSet(io.env.CI) && !isSet(io.env.NO_COLOR)
      ? new ListrRunView(io.stdout, { title: options.title, checked: options.checked })
      : null;
  const screen = live ?? screenView(options.json, ndjson !== null, io, options.itemLines ?? true);
  return { views: [screen, ndjson].filter((view) => view !== null), live };
}

function screenView(json: boolean, ndjson: boolean, io: Terminal, itemLines: boolean): RunEventView | null {
  if (!json) return new PlainLines(io.stdout, undefined, itemLines);
  if (ndjson) return null;
  // With --json stdout is the document's: the run's errors alone, on stderr.
  return {
    handle: (event) => {
      if (event.name === 'log' && event.payload.level === 'error')
        io.stderr.write(`mediabatch run: ${event.payload.message}\n`);
    },
  };
}
