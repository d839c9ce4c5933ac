import { ENVIRONMENT } from '../environment.js';
import { exitCodeRows } from '../exit-codes.js';
import { MEDIABATCH_VERSION } from '../version.js';
import { COMMANDS, type CommandSpec } from './command-table.js';
import { FLAGS, type FlagSpec, flagsOf } from './flags.js';
import { twoColumns, wrap } from './ui/text-columns.js';

const WIDTH = 100;

export function synopsis(command: CommandSpec): string {
  const positionals = command.args.map((arg) => `<${arg}>`).join(' ');
  const args = command.orFlag
    ? ` (${positionals} | ${flagLabel(flagsOf(command.name).find((flag) => flag.name === command.orFlag)!)})`
    : command.args.map((arg) => ` <${arg}>`).join('');
  const rest = command.rest ? (command.restRequired ? ` <${command.rest}>...` : ` [${command.rest}...]`) : '';
  const required = flagsOf(command.name)
    .filter((flag) => flag.required)
    .map((flag) => ` ${flagLabel(flag)}`)
    .join('');
  return `mediabatch ${command.name}${args}${rest}${required} [options]`;
}

/** `--ledger PATH`, `-h, --help`, `--only ID...`. */
export function flagLabel(flag: FlagSpec): string {
  const value = flag.value ? ` ${flag.value}` : '';
  const short = flag.short ? `-${flag.short}, ` : '';
  return `${short}--${flag.name}${value}${flag.multiple ? '...' : ''}`;
}

/** The description followed by what applies when the flag is absent, in one sentence group. */
export function flagDetails(flag: FlagSpec): string {
  const notes = [
    flag.choices ? `One of: ${flag.choices.join(', ')}.` : '',
    flag.multiple ? 'Repeat the flag to give several.' : '',
    flag.default ? `Default: ${flag.default}.` : '',
    flag.env ? `Environment: ${flag.env}.` : '',
  ];
  return [flag.description, ...notes].filter(Boolean).join(' ');
}

const table = (rows: ReadonlyArray<readonly [string, string]>) => twoColumns(rows, WIDTH);

/** The exit codes, all of them or those a command can end with (`exits` of its row). */
function exitCodeLines(exits?: readonly string[]): string[] {
  const rows = exitCodeRows().filter((row) => exits === undefined || exits.includes(row.name));
  return table(rows.map((row) => [String(row.code), row.meaning]));
}

/** A command's examples: each command line as pasted, then what it does. */
export function exampleLines(command: CommandSpec): string[] {
  return command.examples.flatMap(([line, what]) => [
    `  ${line}`,
    ...wrap(what, WIDTH - 6).map((w) => `      ${w}`),
  ]);
}

export function renderMainHelp(): string {
  const lines = [
    `mediabatch ${MEDIABATCH_VERSION}: turns a YAML manifest of prompts into videos from an asynchronous`,
    'generation service, paying once per item and saving every file.',
    '',
    'usage: mediabatch <command> [options]',
    '',
    'commands:',
    ...table(COMMANDS.map((command) => [command.name, command.summary])),
    '',
    'options:',
    ...table([
      ['-h, --help', "Show this help; `mediabatch <command> --help` shows a command's flags."],
      ['--version', 'Print the version.'],
    ]),
    '',
    'environment:',
    ...table(environmentRows(null)),
    '',
    'exit codes:',
    ...exitCodeLines(),
    '',
    'Manifest reference: docs/manifest.md; all commands: docs/commands.md.',
  ];
  return `${lines.join('\n')}\n`;
}

/** Variables that stand in for a flag (MEDIAGEN_BASE_URL), then the others; all, or one command's. */
function environmentRows(command: string | null): Array<readonly [string, string]> {
  const used = (commands: readonly string[]) => command === null || commands.includes(command);
  const flags = (FLAGS as readonly FlagSpec[]).filter((flag) => flag.env && used(flag.commands));
  const variables = ENVIRONMENT.filter((variable) => used(variable.commands));
  return [
    ...flags.map(
      (flag) => [flag.env!, `Used when --${flag.name} is not given: ${flag.description}`] as const,
    ),
    ...variables.map((variable) => [variable.name, variable.description] as const),
  ];
}

export function renderCommandHelp(command: CommandSpec): string {
  const environment = environmentRows(command.name);
  const lines = [
    `usage: ${synopsis(command)}`,
    '',
    ...wrap(`${command.summary}. ${command.description}`, WIDTH),
    '',
    'options:',
    ...table(flagsOf(command.name).map((flag) => [flagLabel(flag), flagDetails(flag)])),
    ...(environment.length > 0 ? ['', 'environment:', ...table(environment)] : []),
    '',
    'examples:',
    ...exampleLines(command),
    '',
    'exit codes:',
    ...exitCodeLines(command.exits),
  ];
  return `${lines.join('\n')}\n`;
}
