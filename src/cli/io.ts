import type { CommandOutcome } from '../codes.js';
import type { CommandName } from './command-table.js';
import type { CommandArgs } from './parse-args.js';

/** What a command may touch of the outside world; injected so commands run inside tests too. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the user asks to stop (Ctrl-C / SIGTERM); `count` is how many times so far. */
  onInterrupt: (listener: (count: number) => void) => void;
  /** Ends the process at once (second Ctrl-C); the ledger is consistent at every instant. */
  exit: (code: number) => never;
}

/**
 * A command receives its flags and positionals already parsed and checked against `flags.ts`, and
 * ends with the library's outcome: the CLI's shell maps it to the exit code (exit-codes.ts).
 */
export type Command<C extends CommandName> = (args: CommandArgs<C>, io: CliIo) => Promise<CommandOutcome>;
