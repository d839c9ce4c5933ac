#!/usr/bin/env node
import { ExitCode } from '../errors.js';
import { main } from './cli.js';
import type { CliIo } from './io.js';

function processIo(): CliIo {
  let interrupts = 0;
  const listeners: Array<(count: number) => void> = [];
  const onSignal = () => {
    interrupts += 1;
    for (const listener of listeners) listener(interrupts);
  };
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
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
        ? process.env.MEDIABATCH_DEBUG
          ? (error.stack ?? error.message)
          : error.message
        : String(error);
    process.stderr.write(
      `mediabatch: internal error: ${detail}\n(please report this; MEDIABATCH_DEBUG=1 shows where it happened)\n`,
    );
    process.exitCode = ExitCode.Internal;
  },
);
