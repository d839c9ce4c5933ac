import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { allPosts, manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/**
 * A run the service refuses before anything is recorded leaves nothing behind (docs/manifest.md,
 * "Who owns an output folder"): no ledger, no owner marker, no gallery, so neither the next run
 * nor another ledger trips on what a wrong key left.
 */
describe('a refused run leaves nothing behind', () => {
  it('a wrong key (exit 3): no ledger, no marker, no gallery; another ledger then runs into the folder', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const p = project('keyless', `${manifestYaml('keyless')}items:\n  - {id: a, prompt: shot a}\n`);
    mkdirSync(p.outDir, { recursive: true });
    const refused = await runAgainst(s, p, [], { MEDIAGEN_API_KEY: 'mg_wrong_key_1234567890' });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      'mediabatch run: the service refused the account: 401 invalid_api_key: The API key is missing, malformed, unknown or revoked; nothing was sent and nothing was recorded',
    );
    expect(refused.stderr + refused.stdout).not.toContain('mg_wrong_key_1234567890');
    expect(allPosts(s)).toEqual([]);
    expect(existsSync(join(p.dir, '.mediabatch'))).toBe(false);
    expect(readdirSync(p.outDir)).toEqual([]);

    // With the right key and a ledger of its own, nothing of the refused run is in the way.
    const other = await runAgainst(s, p, ['--ledger', 'elsewhere.sqlite']);
    expect(other.code, other.stderr).toBe(0);
    expect(readdirSync(p.outDir)).toContain('a.mp4');
  });
});
