import { describe, expect, it } from 'vitest';
import { ALL_COMMANDS } from '../../src/cli/command-table.js';
import { RUN_FLAGS } from '../../src/cli/commands/run-flags.js';
import { libraryOptions } from '../../src/cli/flag-row.js';
import { FLAGS, flagsOf } from '../../src/cli/flags.js';
import { parseCommandArgs } from '../../src/cli/parse-args.js';

/** The CLI's table is assembled from each command's own (src/cli/commands/<name>-flags.ts). */
describe("the commands' flag tables", () => {
  it.each(ALL_COMMANDS)('%s lists each flag name once, --help among them', (command) => {
    const names = flagsOf(command).map((flag) => flag.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('help');
  });

  it('lists a shared flag once, with every command whose table takes it', () => {
    const ledger = FLAGS.filter((flag) => flag.name === 'ledger');
    expect(ledger.map((flag) => flag.commands)).toEqual([
      ['run', 'plan', 'status', 'report', 'import', 'forget', 'keep', 'check', 'audit', 'export'],
      ['copy-ledger'],
    ]);
    for (const command of ALL_COMMANDS)
      for (const flag of flagsOf(command)) expect(flag.commands).toContain(command);
  });

  it("gives the library the options a command's flags name, only those given", () => {
    const parsed = parseCommandArgs('run', ['batch.yaml', '--max-unsaved', '4', '--retry-failed', '--json']);
    if (parsed.help) throw new Error('expected values');
    expect(libraryOptions(RUN_FLAGS, parsed.values)).toEqual({
      redo: [],
      only: [],
      maxUnsaved: 4,
      retryFailed: true,
      regenerateExpired: false,
      redefine: false,
    });
  });
});
