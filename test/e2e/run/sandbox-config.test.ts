import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';

/**
 * `run --sandbox` takes a sandbox configuration (`--sandbox-config FILE`, as `mediabatch sandbox
 * --config` does), and a manifest asking for more jobs at once than the service's limit is told so,
 * by run and by plan, instead of being cut down in silence.
 */
const MANIFEST = `${manifestYaml('configured', 'concurrency: 5\n')}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`;
// A workspace that runs two jobs at a time (the demo settings allow three), and jobs of a blink.
const CONFIG = `seed: 1
keys: [{key: mg_config_test_000000000000, id: 1, workspace: ws_config}]
workspaces: [{id: ws_config, balance_usd: "5.00", wallet_enabled: true, concurrency_limit: 2}]
queued_seconds: 0.05
running_seconds: {min: 0.1, max: 0.2}
retry_after_seconds: 0.1
`;
const ABOVE =
  "the manifest's concurrency (5) is above the service's limit for this workspace (2 jobs at a time): the run keeps at most 2 in flight";

describe('run --sandbox with a sandbox configuration', () => {
  it("runs the embedded sandbox on the file's settings, and says the manifest's concurrency is above its limit", async () => {
    const p = project('configured', MANIFEST, { 'fast.yaml': CONFIG });
    const ran = await runCli(['run', 'batch.yaml', '--sandbox', '--sandbox-config', 'fast.yaml'], {
      cwd: p.dir,
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`warn: ${ABOVE}`);
    expect(ran.stdout).toContain('2/2 done');
    expect(existsSync(join(p.dir, 'out', 'sandbox', 'configured', 'a.mp4'))).toBe(true);

    const alone = await runCli(['run', 'batch.yaml', '--sandbox-config', 'fast.yaml'], { cwd: p.dir });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe(
      'mediabatch run: --sandbox-config configures the embedded sandbox: it goes with --sandbox; without it the run is against the service\n',
    );
  });

  it('plan against a service with a lower limit says so too', async () => {
    const sandbox = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '10.00', wallet_enabled: true, concurrency_limit: 2 }],
    });
    try {
      const p = project('configured', MANIFEST);
      const plan = await runCli(['plan', 'batch.yaml'], { cwd: p.dir, env: cliEnv(sandbox) });
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toContain(`warning: ${ABOVE}`);
    } finally {
      await sandbox.close();
    }
  });
});
