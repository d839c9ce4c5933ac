import { type RunObserver, silentObserver } from '../../render.js';
import { ListrRunView } from './listr-view.js';
import { bothObservers, NdjsonObserver } from './ndjson-observer.js';
import { PlainObserver } from './plain-observer.js';

/** The terminal a run is shown on. */
interface Terminal {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** How a run shows itself: what the runner reports to, and the parts that need a word at the end. */
export interface RunProgress {
  observer: RunObserver;
  /** The live view, to be finished before the summary is written under it. */
  live: ListrRunView | null;
  ndjson: NdjsonObserver | null;
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
    planLine: string;
    checked: string;
    /** Plain lines: a line per item event (off with --no-item-lines). */
    itemLines?: boolean;
  },
  io: Terminal,
): RunProgress {
  const ndjson = options.ndjson ? new NdjsonObserver(io.stderr) : null;
  ndjson?.plan(options.planLine);
  const live =
    !options.json && io.stdout.isTTY && !isSet(io.env.CI) && !isSet(io.env.NO_COLOR)
      ? new ListrRunView(io.stdout, { title: options.title, checked: options.checked })
      : null;
  live?.start();
  const screen = live ?? screenObserver(options.json, ndjson !== null, io, options.itemLines ?? true);
  return { observer: ndjson ? bothObservers(screen, ndjson) : screen, live, ndjson };
}

function screenObserver(json: boolean, ndjson: boolean, io: Terminal, itemLines: boolean): RunObserver {
  if (json) {
    if (ndjson) return silentObserver;
    return {
      ...silentObserver,
      log: (level, message) => level === 'error' && io.stderr.write(`mediabatch run: ${message}\n`),
    };
  }
  return new PlainObserver(io.stdout, undefined, itemLines);
}
