import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, tempProject } from '../../support/cli.js';
import { cliEnv, manifestYaml, startTestSandbox } from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const OWNER = "the output folder mist/out/edits belongs to edits's ledger mist/.mediabatch/edits.sqlite";
const WAY_ON = 'To go on with the ledger that owns the folder: --ledger mist/.mediabatch/edits.sqlite';

/**
 * Issue 41, item 1: `status` and `export` with a ledger that does not own the output folder used to
 * read it as a batch where nothing had run (every item pending, $0, exit 0). They make plan's and
 * run's check: the owning ledger named, exit 2, nothing created.
 */
describe('status and export with a ledger that does not own the output folder', () => {
  it('refuse it naming the owning ledger, exit 2, and create nothing', async () => {
    sandbox = await startTestSandbox();
    const work = tempProject({
      'mist/edits.yaml': `${manifestYaml('edits', 'output: {dir: out/edits}\n')}items:\n  - {id: e1, prompt: mist}\n`,
    });
    onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    const first = await runCli(['run', 'edits.yaml', '--poll-interval', '0.1'], {
      cwd: join(work, 'mist'),
      env: cliEnv(sandbox),
    });
    expect(first.code, first.stderr).toBe(0);
    const wrong = ['mist/edits.yaml', '--ledger', '.mediabatch/edits.sqlite'];

    for (const args of [
      ['status', ...wrong],
      ['status', ...wrong, '--json'],
      ['export', ...wrong],
      ['export', ...wrong, '--out', 'all.jsonl'],
      ['export', ...wrong, '--kept', '--out', 'kept.jsonl'],
    ]) {
      const refused = await runCli(args, { cwd: work });
      expect(refused.code, `${args.join(' ')}: ${refused.stdout}`).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(OWNER);
      expect(refused.stderr).toContain(WAY_ON);
      expect(readdirSync(work).sort()).toEqual(['mist']);
    }
    expect(existsSync(join(work, '.mediabatch'))).toBe(false);

    // The owning ledger reads as before.
    const right = await runCli(['status', 'mist/edits.yaml', '--ledger', 'mist/.mediabatch/edits.sqlite'], {
      cwd: work,
    });
    expect(right.code, right.stderr).toBe(0);
    expect(right.stdout).toContain('done');
  });
});
