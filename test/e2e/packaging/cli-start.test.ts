import { readFileSync } from 'node:fs';
import { Module } from 'node:module';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';

const CLI_FOLDER = resolve(import.meta.dirname, '../../../dist/cli');

/**
 * The command's start (docs/architecture.md): the build leaves the bundle's code cache beside it,
 * made for this Node, so a command starts without compiling the bundle again.
 */
describe('the command as built', () => {
  it('leaves a code cache that this Node accepts for the bundle', () => {
    const source = readFileSync(resolve(CLI_FOLDER, 'main.cjs'), 'utf8').replace(/^#!.*/, '');
    const cachedData = readFileSync(resolve(CLI_FOLDER, 'main.cjs.cache'));
    const script = new Script(Module.wrap(source), { filename: resolve(CLI_FOLDER, 'main.cjs'), cachedData });
    expect(script.cachedDataRejected).toBe(false);
  });

  it('starts through it and answers as the command', async () => {
    const version = await runCli(['--version'], { cwd: tmpdir() });
    expect([version.code, version.stderr]).toEqual([0, '']);
    expect(version.stdout.trim()).toBe(
      JSON.parse(readFileSync(resolve(CLI_FOLDER, '../../package.json'), 'utf8')).version,
    );
  });
});
