import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/cli/command-table.js';
import { flagsOf } from '../../../src/cli/flags.js';
import { runCli, tempProject } from '../../support/cli.js';

const dir = tempProject({});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => runCli(args, { cwd: dir });

describe('a CLI that explains itself', () => {
  it('--help lists every command and every exit code, and exits 0', async () => {
    const result = await cli('--help');
    expect(result.code).toBe(0);
    for (const command of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^  ${command.name} +\\S`, 'm'));
    for (const code of [0, 1, 2, 3, 70, 130])
      expect(result.stdout).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
  });

  it.each(COMMANDS.map((command) => command.name))('%s --help shows each of its flags', async (name) => {
    const result = await cli(name, '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^usage: mediabatch ${name}`));
    for (const flag of flagsOf(name)) expect(result.stdout).toContain(`--${flag.name}`);
  });

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(
      readFileSync(resolve(import.meta.dirname, '../../../package.json'), 'utf8'),
    );
    const result = await cli('--version');
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('a mistyped command or flag exits 2 with what was probably meant', async () => {
    const command = await cli('stauts', 'batch.yaml');
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("unknown command 'stauts', did you mean 'status'?");
    const flag = await cli('run', 'batch.yaml', '--regenerate-expried');
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(
      "unknown option '--regenerate-expried', did you mean '--regenerate-expired'?",
    );
    expect(flag.stdout).toBe('');
  });

  it('no arguments prints the help on stderr and exits 2', async () => {
    const result = await cli();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage: mediabatch <command> [options]');
  });
});
