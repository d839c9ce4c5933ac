import { UserError } from '../errors.js';
import { exitCodeOfError, exitCodeOfOutcome } from '../exit-codes.js';
import { didYouMean } from '../suggest.js';
import { MEDIABATCH_VERSION } from '../version.js';
import { ALL_COMMANDS, type CommandName, commandSpec } from './command-table.js';
import { renderCommandHelp, renderMainHelp } from './help.js';
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
  keep: async () => (await import('./commands/keep.js')).keepCommand,
  check: async () => (await import('./commands/check.js')).checkCommand,
  audit: async () => (await import('./commands/audit.js')).auditCommand,
  'copy-ledger': async () => (await import('./commands/copy-ledger.js')).copyLedgerCommand,
  export: async () => (await import('./commands/export.js')).exportCommand,
  sandbox: async () => (await import('./commands/sandbox.js')).sandboxCommand,
};

const GLOBAL_OPTIONS = ['--help', '--version'];
const suggest = (name: string, names: readonly string[]) => didYouMean(name, names);

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr.write(renderMainHelp());
    return exitCodeOfError('invalid_usage');
  }
  if (name === '--help' || name === '-h' || name === 'help') return help(rest[0], io);
  if (name === '--version' || name === '-V') {
    io.stdout.write(`${MEDIABATCH_VERSION}\n`);
    return exitCodeOfOutcome('done');
  }
  const spec = commandSpec(name);
  if (!spec) {
    const what = name.startsWith('-') ? 'option' : 'command';
    const hint = suggest(name, name.startsWith('-') ? GLOBAL_OPTIONS : ALL_COMMANDS);
    io.stderr.write(`mediabatch: unknown ${what} '${name}'${hint} (see mediabatch --help)\n`);
    return exitCodeOfError('invalid_usage');
  }
  const command = spec.name as CommandName;
  try {
    return await dispatch(command, rest, io);
  } catch (error) {
    if (error instanceof UserError) {
      io.stderr.write(`mediabatch ${command}: ${cliWords(error)}\n`);
      return exitCodeOfError(error.code);
    }
    throw error;
  }
}

async function dispatch<C extends CommandName>(command: C, argv: string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs(command, argv);
  if (parsed.help) {
    io.stdout.write(renderCommandHelp(commandSpec(command)!));
    return exitCodeOfOutcome('done');
  }
  const load = LOADERS[command] as () => Promise<Command<C>>;
  // Each command ends with the library's outcome; its exit code is the table's (exit-codes.ts).
  return exitCodeOfOutcome(await (await load())(parsed, io));
}

function help(topic: string | undefined, io: CliIo): number {
  const spec = topic === undefined ? undefined : commandSpec(topic);
  if (topic !== undefined && spec === undefined) {
    io.stderr.write(`mediabatch: no command '${topic}'${suggest(topic, ALL_COMMANDS)}\n`);
    return exitCodeOfError('invalid_usage');
  }
  io.stdout.write(spec ? renderCommandHelp(spec) : renderMainHelp());
  return exitCodeOfOutcome('done');
}
