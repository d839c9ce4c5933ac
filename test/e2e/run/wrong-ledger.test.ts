import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, tempProject } from '../../support/cli.js';
import { allPosts, cliEnv, manifestYaml, sha256File, startTestSandbox } from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

/** A project in work/mist, run once from inside it, so its folder has an owner. */
async function ranProject(): Promise<{ work: string; files: Record<string, string> }> {
  const work = tempProject({
    'mist/edits.yaml': `${manifestYaml('edits', 'output: {dir: out/edits}\n')}items:\n  - {id: e1, prompt: mist}\n`,
  });
  onTestFinished(() => rmSync(work, { recursive: true, force: true }));
  const mist = join(work, 'mist');
  const first = await runCli(['run', 'edits.yaml', '--poll-interval', '0.1'], {
    cwd: mist,
    env: cliEnv(sandbox),
  });
  expect(first.code, first.stderr).toBe(0);
  return { work, files: { 'e1.mp4': sha256File(join(mist, 'out', 'edits', 'e1.mp4')) } };
}

describe('a ledger that does not own the folder', () => {
  it('is refused with the owning ledger named first, and the refused command leaves no file', async () => {
    sandbox = await startTestSandbox();
    const { work, files } = await ranProject();
    const posts = allPosts(sandbox).length;
    const refused = await runCli(['run', 'mist/edits.yaml', '--ledger', '.mediabatch/edits.sqlite'], {
      cwd: work,
      env: cliEnv(sandbox),
    });
    expect(refused.code).toBe(2);
    // The likely mistake is the ledger path: the way on is the ledger the marker names.
    expect(refused.stderr).toContain(
      "the output folder mist/out/edits belongs to edits's ledger mist/.mediabatch/edits.sqlite, not to .mediabatch/edits.sqlite",
    );
    expect(refused.stderr).toContain(
      'To go on with the ledger that owns the folder: --ledger mist/.mediabatch/edits.sqlite (or no --ledger at all: it is the default)',
    );
    // Another folder comes second, and says what it costs.
    const lines = refused.stderr.split('\n');
    const owning = lines.findIndex((line) => line.includes('To go on with the ledger that owns the folder'));
    const over = lines.findIndex((line) => line.includes('paying for every item again'));
    expect(owning).toBeGreaterThan(-1);
    expect(over).toBeGreaterThan(owning);
    // Nothing sent, nothing left behind: no ledger, no lock, no folder.
    expect(allPosts(sandbox)).toHaveLength(posts);
    expect(existsSync(join(work, '.mediabatch'))).toBe(false);
    expect(readdirSync(work).sort()).toEqual(['mist']);
    expect(sha256File(join(work, 'mist', 'out', 'edits', 'e1.mp4'))).toBe(files['e1.mp4']);

    // plan refuses the same way, and leaves nothing either.
    const plan = await runCli(['plan', 'mist/edits.yaml', '--ledger', '.mediabatch/edits.sqlite'], {
      cwd: work,
      env: cliEnv(sandbox),
    });
    expect(plan.code).toBe(2);
    expect(plan.stdout).toBe('');
    expect(plan.stderr).toContain('--ledger mist/.mediabatch/edits.sqlite');
    expect(readdirSync(work).sort()).toEqual(['mist']);

    // Following the advice works and pays nothing again.
    const again = await runCli(
      ['run', 'mist/edits.yaml', '--ledger', 'mist/.mediabatch/edits.sqlite', '--poll-interval', '0.1'],
      { cwd: work, env: cliEnv(sandbox) },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(allPosts(sandbox)).toHaveLength(posts);
  });

  it('a run refused by the service (wrong address) leaves no new ledger either', async () => {
    sandbox = await startTestSandbox();
    const work = tempProject({ 'b.yaml': `${manifestYaml('b')}items:\n  - {id: one, prompt: one}\n` });
    onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    const base = sandbox.baseUrl.replace(/\/v1$/, '');
    const refused = await runCli(['run', 'b.yaml', '--base-url', base], {
      cwd: work,
      env: { MEDIAGEN_API_KEY: sandbox.apiKey },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('did you mean --base-url');
    expect(readdirSync(work)).toEqual(['b.yaml']);
  });
});
