import { ExitCode, UserError } from '../errors.js';
import type { CliIo, Command } from './io.js';

const USAGE = `usage:
  mediabatch run <manifest> [--base-url URL] [--ledger PATH] [--poll-interval SECONDS]
                            [--sandbox] [--json] [--regenerate-expired]
  mediabatch plan <manifest> [--base-url URL] [--ledger PATH] [--json]
  mediabatch status <manifest> [--ledger PATH] [--json]
  mediabatch report <manifest> [--ledger PATH] [--html FILE]
  mediabatch sandbox [--port N] [--config FILE]

The API key is read from MEDIAGEN_API_KEY, the base URL (with /v1) from --base-url or MEDIAGEN_BASE_URL.`;

const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./commands/run.js')).runCommand,
  plan: async () => (await import('./commands/plan.js')).planCommand,
  status: async () => (await import('./commands/status.js')).statusCommand,
  report: async () => (await import('./commands/report.js')).reportCommand,
  sandbox: async () => (await import('./commands/sandbox.js')).sandboxCommand,
};

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${USAGE}\n`);
    return name === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.stderr.write(`mediabatch: unknown command '${name}'\n${USAGE}\n`);
    return ExitCode.Usage;
  }
  try {
    return await (await load())(rest, io);
  } catch (error) {
    if (error instanceof UserError) {
      io.stderr.write(`mediabatch ${name}: ${error.message}\n`);
      return error.exitCode;
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      io.stderr.write(`mediabatch ${name}: ${(error as Error).message}\n${USAGE}\n`);
      return ExitCode.Usage;
    }
    throw error;
  }
}
