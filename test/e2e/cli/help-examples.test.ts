import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/cli/command-table.js';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, spawnCli, tempProject, waitForOutput } from '../../support/cli.js';
import { cliEnv, manifestYaml, startTestSandbox } from '../../support/e2e.js';

/**
 * Every command's --help shows examples that work as pasted: each line of its "examples:" is run
 * here as written, in a folder holding batch.yaml, against the sandbox (the embedded one for
 * --sandbox, a sandbox server as the service otherwise), in the situation it is for (import after
 * the ledger is lost), and must exit 0. Its "exit codes:" lists only the codes it can end with.
 */
const NAME = 'examples';
const dir = tempProject({
  'batch.yaml': `${manifestYaml(NAME, 'max_cost_usd: "0.50"\n')}items:\n  - {id: beach, prompt: a beach}\n  - {id: city, prompt: a city}\n`,
});
let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const help = async (command: string) => {
  const result = await runCli([command, '--help'], { cwd: dir });
  expect(result.code).toBe(0);
  return result.stdout;
};

/** The lines of a help section (`examples:`, `exit codes:`), up to the next blank line. */
function section(text: string, title: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(`${title}:`);
  expect(start, `${title}: in the help`).toBeGreaterThan(0);
  const end = lines.indexOf('', start);
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/** The command lines of a command's examples, as its help prints them. */
async function examples(command: string): Promise<string[]> {
  const lines = section(await help(command), 'examples').filter((line) => line.startsWith('  mediabatch '));
  expect(lines.length, command).toBeGreaterThanOrEqual(1);
  expect(lines.length, command).toBeLessThanOrEqual(2);
  return lines.map((line) => line.trim());
}

const ran: string[] = [];
async function paste(line: string): Promise<void> {
  const [program, ...args] = line.split(/\s+/);
  expect(program).toBe('mediabatch');
  const result = await runCli(args, { cwd: dir, env: cliEnv(sandbox), timeoutMs: 60_000 });
  expect(result.code, `${line}\n${result.stderr}`).toBe(0);
  ran.push(line);
}

const pasteAll = async (command: string) => {
  for (const line of await examples(command)) await paste(line);
};

describe("every command's --help", () => {
  it('shows examples that work when pasted, in the situation they are for', async () => {
    for (const command of ['plan', 'run', 'status', 'report', 'export', 'keep', 'audit', 'forget'])
      await pasteAll(command);
    expect(existsSync(join(dir, 'plan.json'))).toBe(true);
    expect(existsSync(join(dir, 'items.csv'))).toBe(true);

    // import rebuilds a lost ledger: the ledgers go, the service's jobs (and the embedded sandbox's) stay.
    rmSync(join(dir, '.mediabatch', `${NAME}.sqlite`));
    rmSync(join(dir, '.mediabatch', 'sandbox', `${NAME}.sqlite`));
    await pasteAll('import');
    await pasteAll('copy-ledger');
    expect(existsSync(join(dir, 'copy.sqlite'))).toBe(true);

    for (const line of await examples('sandbox')) {
      const { child, done } = spawnCli(line.split(/\s+/).slice(1), { cwd: dir });
      await waitForOutput(child, (text) => text.includes('Ctrl-C stops'));
      child.kill('SIGINT');
      const result = await done;
      expect(result.code, `${line}\n${result.stderr}`).toBe(0);
      ran.push(line);
    }
    expect(existsSync(join(dir, 'sandbox.json'))).toBe(true);

    const all = COMMANDS.flatMap((command) => command.examples.map(([line]) => line));
    expect(ran.sort()).toEqual(all.sort());
  }, 180_000);

  it.each([
    ['run', [0, 1, 2, 3, 70, 130]],
    ['plan', [0, 1, 2, 3, 70]],
    ['status', [0, 1, 2, 70]],
    ['keep', [0, 2, 3, 70]],
    ['audit', [0, 1, 2, 3, 4, 70]],
    ['sandbox', [0, 2, 70, 130]],
  ] as const)('%s lists only the exit codes it can end with: %j', async (command, codes) => {
    const listed = section(await help(command), 'exit codes')
      .map((line) => /^ {2}(\d+) /.exec(line)?.[1])
      .filter((code) => code !== undefined)
      .map(Number);
    expect(listed).toEqual(codes);
  });
});
