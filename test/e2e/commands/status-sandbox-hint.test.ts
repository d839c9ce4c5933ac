import { rmSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { manifestYaml } from '../../support/e2e.js';

describe('status after a sandbox run', () => {
  it('says where the sandbox ledger is and how to read it, when the real one does not exist', async () => {
    const dir = tempProject({ 'demo.yaml': `${manifestYaml('demo')}items:\n  - {id: one, prompt: one}\n` });
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const ran = await runCli(['run', 'demo.yaml', '--sandbox', '--poll-interval', '0.1'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);

    const plain = await runCli(['status', 'demo.yaml'], { cwd: dir });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('(not created yet: nothing has run)');
    expect(plain.stdout).toContain(
      `a sandbox run of demo keeps its ledger at ${dir}/.mediabatch/sandbox/demo.sqlite: add --sandbox to read it (mediabatch status demo.yaml --sandbox)`,
    );
    const json = JSON.parse((await runCli(['status', 'demo.yaml', '--json'], { cwd: dir })).stdout);
    expect(json.totals.pending).toBe(1);

    const sandbox = await runCli(['status', 'demo.yaml', '--sandbox'], { cwd: dir });
    expect(sandbox.stdout).toContain('one');
    expect(sandbox.stdout).toMatch(/1 done/);
    expect(sandbox.stdout).not.toContain('add --sandbox');
  });
});
