import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, tempProject } from '../../support/cli.js';
import { allPosts, cliEnv, manifestYaml, startTestSandbox } from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

describe('an s3:// output with no credentials anywhere', () => {
  it('stops before any POST (exit 2) and names what to set, without the SDK error alone', async () => {
    sandbox = await startTestSandbox();
    const dir = tempProject({
      'b.yaml': `${manifestYaml('b', 'output: {dir: "s3://renders/spring"}\n')}items:\n  - {id: one, prompt: one}\n`,
    });
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const result = await runCli(['run', 'b.yaml'], {
      cwd: dir,
      env: {
        ...cliEnv(sandbox),
        // No key, no profile, no config files; and never the instance metadata address, which is
        // not on this machine (the SDK would otherwise try it last).
        AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9',
        AWS_REGION: 'us-east-1',
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_CONFIG_FILE: join(dir, 'no-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
        HOME: dir,
      },
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with a profile in ~/.aws/config',
    );
    expect(result.stderr).toContain('Nothing was sent');
    expect(allPosts(sandbox)).toHaveLength(0);
    // A refused run leaves no ledger behind either.
    expect(readdirSync(dir)).toEqual(['b.yaml']);
  });
});
