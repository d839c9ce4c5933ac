/**
 * Every flag of mediabatch, assembled from the commands' own tables (`commands/<name>-flags.ts`,
 * which list the shared flags of `shared-flags.ts` they take beside their own). The parser
 * (`parse-args.ts`), the help screens (`help.ts`), `docs/commands.md` and the README's command
 * reference are all made from these tables (`npm run docs` regenerates the Markdown; a test fails
 * when it drifts). Adding a flag is one row in its command's table; its value then appears in the
 * command's parsed values, and, with `option`, in the options the command hands the library.
 */

import { ALL_COMMANDS, type CommandName } from './command-table.js';
import { AUDIT_FLAGS } from './commands/audit-flags.js';
import { CHECK_FLAGS } from './commands/check-flags.js';
import { COPY_LEDGER_FLAGS } from './commands/copy-ledger-flags.js';
import { EXPORT_FLAGS } from './commands/export-flags.js';
import { FORGET_FLAGS } from './commands/forget-flags.js';
import { IMPORT_FLAGS } from './commands/import-flags.js';
import { KEEP_FLAGS } from './commands/keep-flags.js';
import { PLAN_FLAGS } from './commands/plan-flags.js';
import { REPORT_FLAGS } from './commands/report-flags.js';
import { RUN_FLAGS } from './commands/run-flags.js';
import { SANDBOX_FLAGS } from './commands/sandbox-flags.js';
import { STATUS_FLAGS } from './commands/status-flags.js';
import type { FlagRow, FlagValuesOf } from './flag-row.js';

/** Each command's table; the record type asks for one per row of COMMANDS. */
const COMMAND_FLAGS = {
  run: RUN_FLAGS,
  plan: PLAN_FLAGS,
  status: STATUS_FLAGS,
  report: REPORT_FLAGS,
  import: IMPORT_FLAGS,
  forget: FORGET_FLAGS,
  keep: KEEP_FLAGS,
  check: CHECK_FLAGS,
  audit: AUDIT_FLAGS,
  'copy-ledger': COPY_LEDGER_FLAGS,
  export: EXPORT_FLAGS,
  sandbox: SANDBOX_FLAGS,
} as const satisfies { [C in CommandName]: readonly FlagRow[] };

/** A flag of the whole CLI, with the commands whose tables list it. */
export interface FlagSpec extends FlagRow {
  commands: readonly CommandName[];
}

const tableOf = (command: CommandName): readonly FlagRow[] => COMMAND_FLAGS[command];
const takenByAll = (flag: FlagSpec) => flag.commands.length === ALL_COMMANDS.length;

/** Each flag once, as the CLI lists it: with the commands whose tables take it, in COMMANDS order. */
const LISTED = new Map<FlagRow, FlagSpec>(
  ALL_COMMANDS.flatMap(tableOf).map((row) => [
    row,
    { ...row, commands: ALL_COMMANDS.filter((command) => tableOf(command).includes(row)) },
  ]),
);

/**
 * Every flag once, read command by command: each where the first command that takes it lists it,
 * and last those every command takes (`--help`).
 */
export const FLAGS: readonly FlagSpec[] = [...LISTED.values()].sort(
  (a, b) => Number(takenByAll(a)) - Number(takenByAll(b)),
);

/** The parsed flags of one command: booleans default to false, repeatable flags to []. */
export type FlagValues<C extends CommandName> = FlagValuesOf<(typeof COMMAND_FLAGS)[C]>;

/** One command's flags, in its table's order; none for a name that is no command. */
export function flagsOf(command: string): FlagSpec[] {
  const table = (COMMAND_FLAGS as Record<string, readonly FlagRow[]>)[command] ?? [];
  return table.map((row) => LISTED.get(row)!);
}
