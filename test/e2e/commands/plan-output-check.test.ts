import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { manifestYaml } from '../../support/e2e.js';

/**
 * `plan` makes run's output-folder check before it counts (docs/commands.md, `plan`): a folder run
 * would refuse is refused by plan with run's words and exit code, and a plan leaves no folder.
 */
describe('plan checks the output folder as run does', () => {
  it('refuses a folder that cannot take files (exit 2, run would stop here), as run then does', async () => {
    const dir = tempProject({
      'batch.yaml': `${manifestYaml('blocked')}items:\n  - {id: a, prompt: shot a}\n  - {id: b, prompt: shot b}\n`,
    });
    const plan = () => runCli(['plan', 'batch.yaml', '--sandbox'], { cwd: dir });
    // A plan of a project that has not run creates nothing, not even the folder it probed.
    const fresh = await plan();
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(existsSync(join(dir, 'out'))).toBe(false);

    // chmod does not stop root: a regular file where the folder should be stops everyone.
    const folder = join(dir, 'out', 'sandbox', 'blocked');
    mkdirSync(join(folder, '..'), { recursive: true });
    writeFileSync(folder, 'not a folder');
    const refused = await plan();
    expect(refused.code).toBe(2);
    expect(refused.stdout).not.toContain('Plan:');
    expect(refused.stderr).toMatch(
      new RegExp(
        `^mediabatch plan: run would stop here: the output folder ${folder} cannot take files: could not create the folder \\(.*(EEXIST|ENOTDIR)`,
      ),
    );
    const run = await runCli(['run', 'batch.yaml', '--sandbox', '--poll-interval', '0.1'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `the output folder ${folder} cannot take files: could not create the folder`,
    );
  });
});
