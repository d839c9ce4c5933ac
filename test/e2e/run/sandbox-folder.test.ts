import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { manifestYaml } from '../../support/e2e.js';

/**
 * A sandbox run's folder is where `--help` says (docs/services.md, "Sandbox runs are kept apart"):
 * output.dir's last folder moves into a sandbox folder beside it, never inside the real folder.
 */
describe('the sandbox output folder', () => {
  it('with output.dir out, run --sandbox writes sandbox/out as help says, and nothing into out', async () => {
    const dir = tempProject({
      'batch.yaml': `${manifestYaml('flat', 'output: {dir: out}\n')}items:\n  - {id: a, prompt: shot a}\n`,
    });
    const help = await runCli(['run', '--help'], { cwd: dir });
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'out/<name> becomes out/sandbox/<name>, output.dir out becomes sandbox/out',
    );
    const ran = await runCli(['run', 'batch.yaml', '--sandbox', '--poll-interval', '0.1'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);
    expect(readdirSync(join(dir, 'sandbox', 'out'))).toContain('a.mp4');
    expect(existsSync(join(dir, 'out'))).toBe(false);
    // The real batch's plan sees no file of the sandbox's in its folder.
    const plan = await runCli(['plan', 'batch.yaml', '--json'], { cwd: dir });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).not.toContain('a.mp4');
  });
});
