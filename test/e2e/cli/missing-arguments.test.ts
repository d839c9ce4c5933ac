import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { manifestYaml } from '../../support/e2e.js';

/**
 * A command missing what it cannot do without (its manifest, keep's entries, copy-ledger's --to)
 * is a usage mistake found before anything is read: exit 2, the missing argument named, and the
 * command's usage line, the first line of its --help. No library words (`keepTakes()`, a schema's
 * "Too small") and no file left behind.
 */
const dir = tempProject({ 'batch.yaml': `${manifestYaml('missing')}items:\n  - {id: a, prompt: a}\n` });
const cli = (...args: string[]) => runCli(args, { cwd: dir });

async function usageLine(command: string): Promise<string> {
  const help = await cli(command, '--help');
  expect(help.code).toBe(0);
  return help.stdout.split('\n')[0]!;
}

const CASES = [
  // The commands a worker runs on a shared batch by its name alone (docs/shared-ledger.md).
  ...['run', 'plan', 'status', 'report', 'keep', 'audit', 'export'].map((command) => ({
    command,
    args: [],
    says: 'missing <manifest> argument (or --batch)',
  })),
  ...['import', 'forget', 'copy-ledger', 'check'].map((command) => ({
    command,
    args: [],
    says: 'missing <manifest> argument',
  })),
  { command: 'keep', args: ['batch.yaml'], says: 'missing <ID:VARIANT[.TAKE]> argument: give at least one' },
  {
    command: 'keep',
    args: ['batch.yaml', '--sandbox'],
    says: 'missing <ID:VARIANT[.TAKE]> argument: give at least one',
  },
  { command: 'copy-ledger', args: ['batch.yaml'], says: 'missing --to PATH|URL' },
];

describe('a missing argument is a usage error with the usage line', () => {
  it.each(CASES)('$command $args: exit 2, $says', async ({ command, args, says }) => {
    const result = await cli(command, ...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const [first, second, ...more] = result.stderr.trimEnd().split('\n');
    expect(first).toBe(`mediabatch ${command}: ${says} (see mediabatch ${command} --help)`);
    expect(second).toBe(await usageLine(command));
    expect(more).toEqual([]);
    expect(readdirSync(dir)).toEqual(['batch.yaml']);
  });

  it('the usage lines say what is required: keep at least one entry, copy-ledger --to', async () => {
    expect(await usageLine('keep')).toBe(
      'usage: mediabatch keep (<manifest> | --batch NAME) <ID:VARIANT[.TAKE]>... [options]',
    );
    expect(await usageLine('copy-ledger')).toBe(
      'usage: mediabatch copy-ledger <manifest> --to PATH|URL [options]',
    );
    expect(await usageLine('forget')).toBe('usage: mediabatch forget <manifest> [id...] [options]');
  });
});
