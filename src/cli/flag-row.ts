/**
 * One flag as a command declares it (`commands/<name>-flags.ts`, or `shared-flags.ts` for a flag
 * several commands take), the value it parses to, and the library option it gives. `flags.ts`
 * assembles the commands' tables into the one the parser, help and docs read.
 */
import type { FlagKind } from './flag-kinds.js';

export interface FlagRow {
  /** The long name, without `--`. */
  name: string;
  /** What the value is (flag-kinds.ts): the command gets it parsed and checked, as a number. */
  kind?: FlagKind;
  /** One letter for `-x`, where a convention exists (only `-h`). */
  short?: string;
  /** May be given several times; the value is then a list, in order. */
  multiple?: boolean;
  /** The flag takes a value, shown so in help (`--ledger PATH`); a flag without one is a switch. */
  value?: string;
  /**
   * The value may be left out (the flag last, or followed by another flag): it then parses as ''
   * and the command applies `default`.
   */
  optionalValue?: boolean;
  /** With `multiple`: `--flag a b c` gives all three, up to the next option. */
  variadic?: boolean;
  /** The only values accepted (checked by the parser, with a suggestion). */
  choices?: readonly string[];
  /** What applies when the flag is absent, in words (no flag here has a hidden default). */
  default?: string;
  /** The command cannot do without it (`copy-ledger --to`): missing, it is a usage error with the usage line. */
  required?: boolean;
  /** Environment variable read when the flag is absent. */
  env?: string;
  /**
   * The library option the value is given as, unchanged (`--max-unsaved` is `maxUnsaved`), by
   * `libraryOptions`; a flag the command reads itself (`--json`, or a value it converts) has none.
   */
  option?: string;
  description: string;
}

/** The value a flag parses to. */
type ValueOf<F> = F extends { multiple: true }
  ? string[]
  : F extends { required: true }
    ? string
    : F extends { value: string }
      ? F extends { kind: FlagKind }
        ? number | undefined
        : string | undefined
      : boolean;

/** The parsed flags of one table: booleans default to false, repeatable flags to []. */
export type FlagValuesOf<T extends readonly FlagRow[]> = { [F in T[number] as F['name']]: ValueOf<F> };

/** The library options a table's flags give (`option`), each only when its flag gave a value. */
type LibraryOptions<T extends readonly FlagRow[]> = {
  [F in T[number] as F extends { option: infer O extends string } ? O : never]?: Exclude<
    ValueOf<F>,
    undefined
  >;
};

/**
 * The options a command hands the library from the flags of its table that name one: a flag left
 * out gives nothing, so the library's default applies. A command's other options it adds itself.
 */
export function libraryOptions<T extends readonly FlagRow[]>(
  table: T,
  values: FlagValuesOf<T>,
): LibraryOptions<T> {
  const given = values as Record<string, unknown>;
  const options: Record<string, unknown> = {};
  for (const flag of table)
    if (flag.option !== undefined && given[flag.name] !== undefined) options[flag.option] = given[flag.name];
  return options as LibraryOptions<T>;
}
