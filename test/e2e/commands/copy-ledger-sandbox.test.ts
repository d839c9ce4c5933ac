import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { manifestYaml } from '../../support/e2e.js';

/**
 * A batch of the embedded sandbox has no place in PostgreSQL (docs/shared-ledger.md): the sandbox
 * lives inside one command's process, so no command could run the copy. copy-ledger refuses it
 * before it connects, with the reason, and copies nothing.
 */
describe('copy-ledger of a sandbox batch', () => {
  it('refuses a PostgreSQL target (exit 2) and says why; a SQLite file still takes the copy', async () => {
    const dir = tempProject({ 'batch.yaml': `${manifestYaml('demo')}items:\n  - {id: a, prompt: shot a}\n` });
    const ran = await runCli(['run', 'batch.yaml', '--sandbox', '--poll-interval', '0.1'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);
    const from = join(dir, '.mediabatch', 'sandbox', 'demo.sqlite');
    // Nothing listens on port 1: the refusal comes before any connection is tried.
    const url = 'postgres://mediabatch@127.0.0.1:1/shared';
    const refused = await runCli(['copy-ledger', 'batch.yaml', '--ledger', from, '--to', url], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `mediabatch copy-ledger: the ledger to copy into, ${url}, is a shared PostgreSQL ledger, and the batch in ${from} ran against the embedded sandbox: ` +
        'the embedded sandbox lives inside one process, so no other runner could reach its jobs: a shared ledger needs a service every runner reaches (a sandbox server started on its own, say, with its base URL). ' +
        'Copy it into a SQLite file instead; nothing was copied\n',
    );
    const copied = await runCli(['copy-ledger', 'batch.yaml', '--ledger', from, '--to', 'copy.sqlite'], {
      cwd: dir,
    });
    expect(copied.code, copied.stderr).toBe(0);
    expect(existsSync(join(dir, 'copy.sqlite'))).toBe(true);
  });
});
