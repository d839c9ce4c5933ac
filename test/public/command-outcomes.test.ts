import { describe, expect, it } from 'vitest';
import { COMMAND_OUTCOMES, ExitCode, exitCodeOfOutcome, OUTCOMES } from '../../src/index.js';

describe('every command ends with an outcome, mapped by the one table', () => {
  it("gives each outcome the exit code docs/commands.md lists, a run's five among them", () => {
    expect(
      Object.fromEntries(COMMAND_OUTCOMES.map((outcome) => [outcome, exitCodeOfOutcome(outcome)])),
    ).toEqual({
      done: ExitCode.Ok,
      not_done: ExitCode.ItemsNotDone,
      refused: ExitCode.Refused,
      redefined: ExitCode.Usage,
      interrupted: ExitCode.Interrupted,
      unreconciled: ExitCode.Unreconciled,
    });
    expect(COMMAND_OUTCOMES.slice(0, OUTCOMES.length)).toEqual([...OUTCOMES]);
  });
});
