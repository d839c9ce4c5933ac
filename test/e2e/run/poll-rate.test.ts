import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { checkSavedOutputs, cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const ids = ['a', 'b', 'c'];

/**
 * A batch of three jobs that each run `runSeconds`, run with no --poll-interval against a service
 * whose Retry-After is `retryAfter`; answers the gaps between the runner's list polls, in seconds.
 */
async function listGaps(retryAfter: number, runSeconds: number): Promise<number[]> {
  const s = await startTestSandbox({
    retry_after_seconds: retryAfter,
    running_seconds: { min: runSeconds, max: runSeconds },
  });
  sandbox = s;
  const name = `rate-${String(retryAfter).replace('.', '-')}`;
  const p = project(
    name,
    `${manifestYaml(name)}items:\n${ids.map((id) => `  - {id: ${id}, prompt: ${id}}\n`).join('')}`,
  );
  const result = await runCli(['run', p.manifest], { cwd: p.dir, env: cliEnv(s) });
  expect(result.code, result.stderr).toBe(0);
  expect(checkSavedOutputs(s, p, name, ids).problems).toEqual([]);
  const lists = s.records().requests.filter((r) => r.method === 'GET' && r.path === '/v1/jobs');
  const gaps = lists.slice(1).map((r, i) => (r.at - lists[i]!.at) / 1000);
  await s.close();
  sandbox = undefined;
  return gaps;
}

describe('mediabatch run without --poll-interval', () => {
  it("polls at the pace of the service's Retry-After, measured from the sandbox's request log", async () => {
    // Jobs of 3 s: at 1 s per poll that is about three lists; at 0.5 s about six.
    const slow = await listGaps(1, 3);
    const fast = await listGaps(0.5, 3);
    for (const [retryAfter, gaps] of [
      [1, slow],
      [0.5, fast],
    ] as const) {
      expect(gaps.length, `lists at Retry-After ${retryAfter}`).toBeGreaterThanOrEqual(2);
      // Never sooner than Retry-After asks (timer and scheduling slack allowed), never idly slower.
      expect(Math.min(...gaps), `shortest gap at Retry-After ${retryAfter}`).toBeGreaterThanOrEqual(
        retryAfter * 0.8,
      );
      expect(Math.max(...gaps), `longest gap at Retry-After ${retryAfter}`).toBeLessThan(retryAfter * 3);
    }
    expect(fast.length).toBeGreaterThan(slow.length);
  }, 60_000);
});
