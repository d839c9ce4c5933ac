import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { manifestYaml } from '../../support/e2e.js';

/**
 * `export --kept` on a project only a sandbox run has touched says which ledger it read and where
 * the sandbox's is, as `status` does (docs/gallery.md, "Keepers").
 */
describe('export --kept after a sandbox run', () => {
  it('names the ledger it read and the sandbox ledger, with the command that reads it', async () => {
    const yaml = `${manifestYaml('demo')}items:\n  - {id: a, prompt: a}\n  - {id: b, prompt: b}\n  - {id: c, prompt: c}\n`;
    const dir = tempProject({ 'demo.yaml': yaml });
    const ran = await runCli(['run', 'demo.yaml', '--sandbox', '--poll-interval', '0.1'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);

    const plain = await runCli(['export', 'demo.yaml', '--kept'], { cwd: dir });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toBe(
      `mediabatch export: 3 item(s) without a kept take left out (mediabatch keep); no ledger at ${dir}/.mediabatch/demo.sqlite: nothing has run there\n` +
        `mediabatch export: a sandbox run keeps its ledger at ${dir}/.mediabatch/sandbox/demo.sqlite: add --sandbox to read it (mediabatch export demo.yaml --sandbox --kept)\n`,
    );
    const sandbox = await runCli(['export', 'demo.yaml', '--kept', '--sandbox'], { cwd: dir });
    expect(sandbox.code, sandbox.stderr).toBe(0);
    expect(sandbox.stdout.trim().split('\n')).toHaveLength(3);
    expect(sandbox.stderr).toBe('');
  });
});
