#!/usr/bin/env node
import { ExitCode } from '../exit-codes.js';
import { main } from './cli.js';
import type { CliIo } from './io.js';

/**
 * A reader that goes away (`mediabatch status x.yaml | head -3`) closes stdout under us. That is
 * no error of the command: what it prints next is dropped, quietly, and the command finishes its
 * work as usual, so a run keeps running and saving, and the ledger stays whole (docs/commands.md).
 */
function dropOutputWhenReaderLeaves(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    process.stderr.write(`mediabatch: cannot write to standard output: ${error.message}\n`);
    process.exitCode = ExitCode.Internal;
  });
}

/**
 * The process's environment, taken once: the CLI hands it to the library, which reads its settings
 * from it once per batch, and reads MEDIABATCH_DEBUG from it here. The library never changes it.
 */
const environment = process.env;
// The AWS SDK warns on every start under Node 20 about its releases of 2027; mediabatch pins its
// version and supports Node 20, so on a user's terminal the warning is only noise. The process is
// the CLI's to configure, not the library's.
environment.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function processIo(): CliIo {
  dropOutputWhenReaderLeaves(process.stdout);
  let interrupts = 0;
  const listeners: Array<(count: number) => void> = [];
  const onSignal = () => {
    interrupts += 1;
    for (const listener of listeners) listener(interrupts);
  };
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: environment,
    cwd: process.cwd(),
    onInterrupt: (listener) => {
      if (listeners.length === 0) {
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      }
      listeners.push(listener);
    },
    exit: (code) => process.exit(code),
  };
}

main(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A bug, not a user error: say so plainly, without a stack trace unless asked for with
    // MEDIABATCH_DEBUG=1; the message never carries the API key.
    const detail =
      error instanceof Error
        ? environment.MEDIABATCH_DEBUG
          ? (error.stack ?? error.message)
          : error.message
        : String(error);
    process.stderr.write(
      `mediabatch: internal error: ${detail}\n(please report this; MEDIABATCH_DEBUG=1 shows where it happened)\n`,
    );
    process.exitCode = ExitCode.Internal;
  },
);
