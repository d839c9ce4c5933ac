import { resolve } from 'node:path';
import {
  demoSandboxConfig,
  exitCodeOfOutcome,
  loadSandboxConfig,
  type SandboxConfigInput,
  startSandbox,
  UserError,
} from '../../index.js';
import type { Command } from '../io.js';

const DEFAULT_PORT = 4010;

/**
 * `mediabatch sandbox`: serves the emulator until Ctrl-C or SIGTERM. With --state its jobs outlive
 * the process (docs/sandbox-state.md).
 */
export const sandboxCommand: Command<'sandbox'> = async ({ values }, io) => {
  const port = values.port ?? DEFAULT_PORT;
  if (values.state === '') throw new UserError('--state needs a file name');
  const statePath = values.state === undefined ? undefined : resolve(io.cwd, values.state);
  // A config file is already validated; re-validation in startSandbox is harmless (defaults are idempotent).
  const config: SandboxConfigInput =
    values.config === undefined ? demoSandboxConfig() : loadSandboxConfig(resolve(io.cwd, values.config));

  const sandbox = await startSandbox(config, {
    port,
    ...(statePath === undefined ? {} : { statePath }),
    onProblem: (problem) => io.stderr.write(`mediabatch sandbox: ${problem.message}\n`),
  });
  // The first Ctrl-C closes cleanly; a second one means the user no longer wants to wait for that.
  const stopped = new Promise<void>((done) =>
    io.onInterrupt((count) => {
      if (count > 1) io.exit(exitCodeOfOutcome('interrupted'));
      done();
    }),
  );
  io.stdout.write(`mediabatch sandbox listening on ${sandbox.baseUrl}  API key: ${sandbox.apiKey}\n`);
  if (statePath !== undefined) io.stdout.write(`  state kept in ${statePath}\n`);
  io.stdout.write(
    `  export MEDIAGEN_BASE_URL=${sandbox.baseUrl} MEDIAGEN_API_KEY=${sandbox.apiKey}  (Ctrl-C stops)\n`,
  );
  await stopped;
  await sandbox.close();
  io.stdout.write('mediabatch sandbox stopped\n');
  return 'done';
};
