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

export type Command = (argv: string[], io: CliIo) => Promise<number>;
