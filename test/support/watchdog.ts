import type { SandboxHandle } from '../../src/sandbox/index.js';
import { type CliResult, spawnCli } from './cli.js';
import { cliEnv, type E2eProject } from './e2e.js';

/**
 * A broken promise can make a run loop instead of fail: a resend under a new key keeps creating
 * jobs, a URL that is never refreshed keeps being refused. Rather than wait for the test's
 * timeout, these checks watch the sandbox's own records while the run lasts and name the fault.
 */
export type Watch = (sandbox: SandboxHandle) => string | null;

/** An item of the manifest with more than one job that was not refunded: it was paid twice. */
export const neverPaidTwice =
  (manifestName: string): Watch =>
  (sandbox) => {
    const live = new Map<string, number>();
    for (const job of sandbox.records().jobs) {
      if (job.metadata['mediabatch.manifest'] !== manifestName) continue;
      if (job.status === 'failed' || job.status === 'canceled') continue;
      const item = String(job.metadata['mediabatch.item']);
      live.set(item, (live.get(item) ?? 0) + 1);
    }
    const twice = [...live].find(([, count]) => count > 1);
    return twice
      ? `item ${twice[0]} has ${twice[1]} charged jobs: a resend went out under a new Idempotency-Key`
      : null;
  };

/** A job whose downloads were refused (403) `limit` times in a row: its URL is not being refreshed. */
export const urlsRefreshed =
  (limit = 4): Watch =>
  (sandbox) => {
    const refusedInARow = new Map<string, number>();
    for (const request of sandbox.records().requests) {
      if (!request.path.startsWith('/v1/files/')) continue;
      const jobId = request.path.split('/')[3]!;
      const count = request.status === 403 ? (refusedInARow.get(jobId) ?? 0) + 1 : 0;
      refusedInARow.set(jobId, count);
      if (count >= limit)
        return `job ${jobId}: ${count} downloads in a row refused with 403: the signed URL is not being refreshed`;
    }
    return null;
  };

/**
 * A job of the manifest that succeeded more than `ms` ago (sandbox clock = wall clock) and has not
 * been downloaded: the run is not watching it.
 */
export const finishedJobsFetchedWithin =
  (manifestName: string, ms: number): Watch =>
  (sandbox) => {
    const records = sandbox.records();
    const fetched = new Set(
      records.requests.filter((r) => r.path.startsWith('/v1/files/') && r.status === 200).map((r) => r.jobId),
    );
    for (const job of records.jobs) {
      if (job.metadata['mediabatch.manifest'] !== manifestName || job.status !== 'succeeded') continue;
      const waited = Date.now() - Date.parse(job.completedAt!);
      if (waited > ms && !fetched.has(job.id))
        return `job ${job.id} succeeded ${waited} ms ago and was not downloaded: the run is not watching it`;
    }
    return null;
  };

/**
 * `mediabatch run` against the sandbox (fast poll interval), checked by `watches` every 25 ms: the
 * first violation kills the run and fails the test with its message.
 */
export async function runWatched(
  sandbox: SandboxHandle,
  p: E2eProject,
  watches: Watch[],
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const { child, done } = spawnCli(['run', p.manifest, '--poll-interval', '0.1', ...extraArgs], {
    cwd: p.dir,
    env: { ...cliEnv(sandbox), ...env },
  });
  let finished = false;
  void done.then(() => {
    finished = true;
  });
  while (!finished) {
    for (const watch of watches) {
      const fault = watch(sandbox);
      if (fault !== null) {
        child.kill('SIGKILL');
        await done;
        throw new Error(fault);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return done;
}
