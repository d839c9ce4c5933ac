import { ExitCode, UserError } from '../errors.js';
import { didYouMean } from '../suggest.js';
import { COMMANDS, type CommandName, commandSpec } from './command-table.js';
import { renderCommandHelp, renderMainHelp, version } from './help.js';
import type { CliIo, Command } from './io.js';
import { parseCommandArgs } from './parse-args.js';
import { cliWords } from './words.js';

/** Each command's module, loaded on demand; the record type asks for one per row of COMMANDS. */
const LOADERS: { [C in CommandName]: () => Promise<Command<C>> } = {
  run: async () => (await import('./commands/run.js')).runCommand,
  plan: async () => (await import('./commands/plan.js')).planCommand,
  status: async () => (await import('./commands/status.js')).statusCommand,
  report: async () => (await import('./commands/report.js')).reportCommand,
  import: async () => (await import('./commands/import.js')).importCommand,
  forget: async () => (await import('./commands/forget.js')).forgetCommand,
  'copy-ledger': async () => (await import('./commands/copy-ledger.js')).copyLedgerCommand,
  export: async () => (await import('./commands/export.js')).exportCommand,
  sandbox: async () => (await import('./commands/sandbox.js')).sandboxCommand,
};

const GLOBAL_OPTIONS = ['--help', '--version'];

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr.write(renderMainHelp());
    return ExitCode.Usage;
  }
  if (name === '--help' || name === '-h' || name === 'help') return help(rest[0], io);
  if (name === '--version' || name === '-V') {
    io.stdout.write(`${version()}\n`);
    return ExitCode.Ok;
  }
  const spec = commandSpec(name);
  if (!spec) {
    const what = name.startsWith('-') ? 'option' : 'command';
    const candidates = name.startsWith('-') ? GLOBAL_OPTIONS : COMMANDS.map((command) => command.name);
    io.stderr.write(
      `mediabatch: unknown ${what} '${name}'${didYouMean(name, candidates, (s) => `'${s}'`)} (see mediabatch --help)\n`,
    );
    return ExitCode.Usage;
  }
  const command = spec.name as CommandName;
  try {
    return await dispatch(command, rest, io);
  } catch (error) {
    if (error instanceof UserError) {
      io.stderr.write(`mediabatch ${command}: ${cliWords(error)}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

async function dispatch<C extends CommandName>(command: C, argv: string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs(command, argv);
  if (parsed.help) {
    io.stdout.write(renderCommandHelp(commandSpec(command)!));
    return ExitCode.Ok;
  }
  const load = LOADERS[command] as () => Promise<Command<C>>;
  return (await load())(parsed, io);
}

function help(topic: string | undefined, io: CliIo): number {
  if (topic === undefined) {
    io.stdout.write(renderMainHelp());
    return ExitCode.Ok;
  }
  const spec = commandSpec(topic);
  if (spec) {
    io.stdout.write(renderCommandHelp(spec));
    return ExitCode.Ok;
  }
  const names = COMMANDS.map((command) => command.name);
  io.stderr.write(`mediabatch: no command '${topic}'${didYouMean(topic, names, (s) => `'${s}'`)}\n`);
  return ExitCode.Usage;
}
