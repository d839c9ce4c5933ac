import type { RunReporter } from '../runner/reporter.js';
import { silentReporter } from '../runner/reporter.js';
import { bothReporters, NdjsonReporter } from '../ui/ndjson-reporter.js';
import { PlainReporter } from '../ui/plain-reporter.js';
import { TtyReporter } from '../ui/tty-reporter.js';
import type { CliIo } from './io.js';

/** How a run shows itself: what the runner reports to, and the parts that need a word at the end. */
export interface RunProgress {
  reporter: RunReporter;
  /** The live view, to be stopped before the summary is written under it. */
  live: TtyReporter | null;
  ndjson: NdjsonReporter | null;
}

/**
 * The live view in a terminal, plain lines in a pipe, and with --json only errors, on stderr;
 * `--progress ndjson` adds one JSON event per line on stderr (and then owns stderr).
 */
export function runProgress(
  options: { json: boolean; ndjson: boolean; title: string; planLine: string },
  io: CliIo,
): RunProgress {
  const ndjson = options.ndjson ? new NdjsonReporter(io.stderr) : null;
  ndjson?.plan(options.planLine);
  const screen = screenReporter(options.json, ndjson !== null, io, options.title);
  return {
    reporter: ndjson ? bothReporters(screen, ndjson) : screen,
    live: screen instanceof TtyReporter ? screen : null,
    ndjson,
  };
}

function screenReporter(json: boolean, ndjson: boolean, io: CliIo, title: string): RunReporter {
  if (json) {
    if (ndjson) return silentReporter;
    return {
      ...silentReporter,
      log: (level, message) => level === 'error' && io.stderr.write(`mediabatch run: ${message}\n`),
    };
  }
  return io.stdout.isTTY ? new TtyReporter(io.stdout, title) : new PlainReporter(io.stdout);
}
