/**
 * What the library reads of the outside world: the environment (base URL, API key, timings) and the
 * folder relative paths start from. The CLI passes the process's; an API caller passes its own.
 */
export interface Host {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Where the library's warnings and hook output go (the CLI's stderr; an API run's `log` events). */
  stderr: NodeJS.WritableStream;
}
