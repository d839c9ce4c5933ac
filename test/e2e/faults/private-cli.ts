import { type ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import { cpSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type CliOptions, type CliResult, spawnCli } from '../../support/cli.js';
import { removeTempDir, tempDir } from '../../support/temp.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/**
 * A private copy of the built CLI. Long loops must not spawn dist/ while another test run
 * rebuilds it (a half-written module makes the child exit 70, which is no fault of the runner).
 * The copy is checked by loading every command once; a torn copy is taken again.
 */
export function snapshotCli(): { cli: string; remove: () => void } {
  for (let tries = 1; ; tries++) {
    const dir = tempDir('mediabatch-cli-');
    cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const cli = join(dir, 'dist', 'cli', 'main.js');
    // A run of a missing manifest loads the whole run command, then refuses the path: exit 2,
    // unless a module is torn (exit 70). `run --help` no longer loads the command at all.
    const missing = join(dir, 'no-such-manifest.yaml');
    const check = spawnSync(process.execPath, [cli, 'run', missing], { encoding: 'utf8', timeout: 20_000 });
    if (check.status === 2) return { cli, remove: () => removeTempDir(dir) };
    removeTempDir(dir);
    if (tries >= 5) throw new Error(`no consistent build of the CLI to copy: ${check.stderr}`);
    execFileSync('sleep', ['2']);
  }
}

/** spawnCli, for a given CLI file. */
export function spawnWith(
  cli: string,
  args: string[],
  options: CliOptions,
): { child: ChildProcess; done: Promise<CliResult> } {
  return spawnCli(args, { ...options, cli });
}
