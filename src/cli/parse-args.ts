import { parseArgs } from 'node:util';
import { UserError } from '../errors.js';
import { didYouMean } from '../suggest.js';
import { type CommandName, commandSpec } from './command-table.js';
import { parseKind } from './flag-kinds.js';
import { type FlagSpec, type FlagValues, flagsOf } from './flags.js';
import { synopsis } from './help.js';

export interface CommandArgs<C extends CommandName> {
  values: FlagValues<C>;
  positionals: string[];
}

/** What the command line asked for: a command to run, or that command's help. */
export type Parsed<C extends CommandName> = { help: true } | ({ help: false } & CommandArgs<C>);

const quote = (name: string) => `'${name}'`;

function optionsOf(flags: readonly FlagSpec[]) {
  const option = (flag: FlagSpec) => ({
    type: flag.value ? ('string' as const) : ('boolean' as const),
    multiple: flag.multiple === true,
    ...(flag.short ? { short: flag.short } : {}),
  });
  return Object.fromEntries(flags.map((flag) => [flag.name, option(flag)]));
}

/** What a command takes besides its flags (command-table.ts), and its usage line for a missing one. */
export interface ArgShape {
  args: readonly string[];
  rest?: string | undefined;
  restRequired?: boolean | undefined;
  orFlag?: string | undefined;
  /** `usage: mediabatch keep <manifest> <ID:VARIANT[.TAKE]>... [options]`, shown with a missing argument. */
  usage?: string | undefined;
}

/**
 * Parses one command's arguments against the flag table. Every mistake is a UserError (exit 2)
 * that names the flag and, for a typo, the flag that was probably meant; a missing argument or
 * required flag also shows the command's usage line.
 */
export function parseCommandArgs<C extends CommandName>(command: C, argv: string[]): Parsed<C> {
  const spec = commandSpec(command)!;
  return parseWithFlags(command, flagsOf(command), { ...spec, usage: synopsis(spec) }, argv) as Parsed<C>;
}

/** The parser itself, over any list of flags (tests give it rows the real table lacks yet). */
export function parseWithFlags(
  command: string,
  flags: readonly FlagSpec[],
  shape: ArgShape,
  given: string[],
): { help: true } | { help: false; values: Record<string, unknown>; positionals: string[] } {
  const options = optionsOf(flags);
  const argv = withOptionalValues(given, flags);
  const hint = `(see mediabatch ${command} --help)`;
  // A lenient first pass finds unknown flags, so they can be answered with a suggestion.
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name in options) continue;
    const names = flags.map((flag) => `--${flag.name}`);
    throw new UserError(
      `unknown option '${token.rawName}'${didYouMean(`--${token.name}`, names, quote)} ${hint}`,
    );
  }
  if (tokens.some((token) => token.kind === 'option' && token.name === 'help')) return { help: true };

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UserError(`${describeParseError(error, flags)} ${hint}`);
  }
  const values: Record<string, unknown> = {};
  for (const flag of flags) {
    const value = parsed.values[flag.name];
    checkChoices(flag, value, hint);
    values[flag.name] = flag.kind
      ? parseKind(flag.kind, value as string | undefined, `--${flag.name}`)
      : (value ?? (flag.multiple ? [] : flag.value ? undefined : false));
  }
  const missing = missingArgument(shape, parsed.positionals, values) ?? missingFlag(flags, values);
  if (missing !== null) {
    const usage = shape.usage === undefined ? '' : `\nusage: ${shape.usage}`;
    throw new UserError(`${missing} ${hint}${usage}`);
  }
  checkExtraPositionals(shape, parsed.positionals, hint, values);
  return { help: false, values, positionals: parsed.positionals };
}

/**
 * Spells out the two shorthand forms for node's parser: a flag whose value may be left out gets
 * '' when nothing (or another flag) follows it; a variadic flag repeats for each value after it
 * (`--redo a b` is `--redo a --redo b`).
 */
function withOptionalValues(argv: string[], flags: readonly FlagSpec[]): string[] {
  const optional = new Set(flags.filter((flag) => flag.optionalValue).map((flag) => `--${flag.name}`));
  const variadic = new Set(flags.filter((flag) => flag.variadic).map((flag) => `--${flag.name}`));
  if (optional.size === 0 && variadic.size === 0) return argv;
  const out: string[] = [];
  let repeating: string | null = null;
  argv.forEach((arg, index) => {
    const next = argv[index + 1];
    if (arg.startsWith('-')) repeating = variadic.has(arg) ? arg : null;
    else if (repeating !== null && argv[index - 1] !== repeating) out.push(repeating);
    out.push(arg);
    if (optional.has(arg) && (next === undefined || next.startsWith('-'))) out.push('');
  });
  return out;
}

function checkChoices(flag: FlagSpec, value: unknown, hint: string): void {
  if (!flag.choices || value === undefined) return;
  for (const one of Array.isArray(value) ? value : [value]) {
    if (flag.choices.includes(String(one))) continue;
    const allowed = flag.choices.join(', ');
    throw new UserError(
      `--${flag.name} accepts ${allowed}, not '${one}'${didYouMean(String(one), flag.choices, quote)} ${hint}`,
    );
  }
}

/** What is missing of a command's arguments (`missing <manifest> argument`), or null. */
function missingArgument(
  shape: ArgShape,
  positionals: string[],
  values: Record<string, unknown>,
): string | null {
  const { args, orFlag } = shape;
  if (orFlag !== undefined && values[orFlag] !== undefined) return null;
  const missing = args[positionals.length];
  const or = orFlag === undefined ? '' : ` (or --${orFlag})`;
  if (missing !== undefined) return `missing <${missing}> argument${or}`;
  if (shape.rest !== undefined && shape.restRequired && positionals.length === args.length)
    return `missing <${shape.rest}> argument: give at least one`;
  return null;
}

/** A flag the command cannot do without (`copy-ledger --to`), not given. */
function missingFlag(flags: readonly FlagSpec[], values: Record<string, unknown>): string | null {
  const flag = flags.find(
    (one) => one.required && (values[one.name] === undefined || values[one.name] === ''),
  );
  return flag === undefined ? null : `missing --${flag.name} ${flag.value ?? ''}`.trimEnd();
}

function checkExtraPositionals(
  shape: ArgShape,
  positionals: string[],
  hint: string,
  values: Record<string, unknown>,
): void {
  const { args: expected, orFlag, rest } = shape;
  if (orFlag !== undefined && values[orFlag] !== undefined) {
    if (positionals.length === 0) return;
    const named = expected.map((arg) => `<${arg}>`).join(' ');
    throw new UserError(`give ${named} or --${orFlag}, not both (got ${positionals.join(' ')}) ${hint}`);
  }
  if (rest === undefined && positionals.length > expected.length) {
    const extra = positionals.slice(expected.length).join(' ');
    const wanted = expected.length === 0 ? 'no arguments' : expected.map((arg) => `one <${arg}>`).join(', ');
    throw new UserError(`expected ${wanted}, but also got: ${extra} ${hint}`);
  }
}

/** node's parser messages, reworded around our flags (a value missing, or given to a switch). */
function describeParseError(error: unknown, flags: readonly FlagSpec[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const named = flags.find((flag) => message.includes(`'--${flag.name}`));
  if (named === undefined) return message;
  if (named.value) return `--${named.name} needs a value: --${named.name} ${named.value}`;
  return `--${named.name} is a switch and takes no value`;
}
