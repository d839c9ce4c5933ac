import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { spawnCli } from '../../support/cli.js';
import {
  checkSavedOutputs,
  cliEnv,
  type E2eProject,
  ledgerRows,
  manifestYaml,
  project,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';

/**
 * A run resumed after a kill -9 follows the service's Retry-After from its first look, as a fresh
 * run does. The jobs restored from the ledger have finished while no run watched them: the run
 * used to ask the first of them for Retry-After, read the silence of a final job as the documented
 * 10 s and look at the jobs every 10 s, which let short-lived outputs expire unsaved.
 */
const sandboxes: SandboxHandle[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.close()));
});

const RETRY_AFTER = 1;
/** Timer, scheduling and loaded-machine slack on a gap between two looks, in seconds. */
const GAP_SLACK = 0.75;
const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
const itemsYaml = `items:\n${ids.map((id) => `  - {id: ${id}, prompt: pace ${id}}\n`).join('')}`;

async function newSandbox(retentionSeconds?: number): Promise<SandboxHandle> {
  const sandbox = await startTestSandbox({
    retry_after_seconds: RETRY_AFTER,
    queued_seconds: 0.1,
    running_seconds: { min: 1.5, max: 2.5 },
    ...(retentionSeconds ? { retention_seconds: retentionSeconds } : {}),
  });
  sandboxes.push(sandbox);
  return sandbox;
}

const newProject = (name: string) => project(name, `${manifestYaml(name, 'concurrency: 3\n')}${itemsYaml}`);

/** `mediabatch run` with no --poll-interval: the run learns the pace from the service alone. */
function spawnPlainRun(sandbox: SandboxHandle, p: E2eProject) {
  return spawnCli(['run', p.manifest], { cwd: p.dir, env: cliEnv(sandbox) });
}

/** One whole run; what the sandbox's request log saw of it (times in s from its first request). */
async function timedRun(sandbox: SandboxHandle, p: E2eProject) {
  const from = sandbox.records().requests.length;
  const result = await spawnPlainRun(sandbox, p).done;
  const requests = sandbox.records().requests.slice(from);
  const start = requests[0]!.at;
  const looks = requests
    .filter((r) => r.method === 'GET' && (r.path === '/v1/jobs' || r.path.startsWith('/v1/jobs/')))
    .map((r) => (r.at - start) / 1000);
  const gaps = looks.slice(1).map((at, index) => at - looks[index]!);
  return { result, looks, gaps, seconds: (requests.at(-1)!.at - start) / 1000 };
}

/**
 * Runs the batch until three jobs are accepted in the ledger, kills it with SIGKILL, and waits (on
 * the sandbox's records, not a clock) until those jobs have finished at the service.
 */
async function killWithJobsInFlight(sandbox: SandboxHandle, p: E2eProject): Promise<string[]> {
  const { child, done } = spawnPlainRun(sandbox, p);
  const accepted = () =>
    ledgerRows<{ job_id: string }>(p, `SELECT job_id FROM attempts WHERE state = 'accepted'`).map(
      (row) => row.job_id,
    );
  await waitUntil(() => accepted().length >= 3, 20_000, 'three accepted jobs in the ledger');
  child.kill('SIGKILL');
  expect((await done).signal).toBe('SIGKILL');
  const restored = accepted();
  const finished = () =>
    sandbox.records().jobs.filter((job) => restored.includes(job.id) && job.completedAt !== null);
  await waitUntil(() => finished().length === restored.length, 20_000, 'the killed run’s jobs to finish');
  return restored;
}

/** Every item done by one job, charged once, its file as the sandbox made it. */
function expectEachItemPaidOnce(sandbox: SandboxHandle, p: E2eProject, name: string): void {
  const jobs = sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name);
  expect(jobs.map((job) => job.metadata['mediabatch.item']).sort()).toEqual(ids);
  expect(checkSavedOutputs(sandbox, p, name, ids).problems).toEqual([]);
  const states = ledgerRows<{ state: string }>(p, 'SELECT state FROM items').map((row) => row.state);
  expect(states).toEqual(ids.map(() => 'done'));
}

describe('mediabatch run: a run resumed after kill -9 follows the service pace', () => {
  it('looks at the restored jobs at once, then every Retry-After, and ends as soon as a fresh run', async () => {
    const sandbox = await newSandbox();
    const fresh = await timedRun(sandbox, newProject('fresh'));
    expect(fresh.result.code, fresh.result.stderr).toBe(0);

    const p = newProject('resumed');
    const restored = await killWithJobsInFlight(sandbox, p);
    expect(restored).toHaveLength(3);
    const resumed = await timedRun(sandbox, p);
    expect(resumed.result.code, resumed.result.stderr).toBe(0);
    const report = `fresh ${fresh.seconds}s, resumed ${resumed.seconds}s; resumed looks ${resumed.looks.join(' ')}`;
    console.log(report);

    // The first look settles the restored jobs within moments of the start, not a guessed 10 s.
    expect(resumed.looks[0], report).toBeLessThan(1.5);
    // While jobs are in flight, looks stay within the service's Retry-After of one another.
    expect(Math.max(...resumed.gaps), report).toBeLessThan(RETRY_AFTER + GAP_SLACK);
    // Three of its nine jobs were done before it started: never slower than the fresh run of nine.
    expect(resumed.seconds, report).toBeLessThan(fresh.seconds + RETRY_AFTER);
    expectEachItemPaidOnce(sandbox, p, 'resumed');
  }, 90_000);

  it('saves every output of a service that keeps them only 5 s, none expiring in a gap', async () => {
    // At a 10 s pace the jobs submitted after the restart were seen over 7 s after they finished.
    const sandbox = await newSandbox(5);
    const p = newProject('kept-briefly');
    await killWithJobsInFlight(sandbox, p);
    const resumed = await timedRun(sandbox, p);
    expect(resumed.result.code, resumed.result.stderr).toBe(0);
    expect(resumed.result.stdout).toContain('0 expired');
    expectEachItemPaidOnce(sandbox, p, 'kept-briefly');
  }, 60_000);
});
