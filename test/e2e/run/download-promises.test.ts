import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  checkSavedOutputs,
  jobsOfItem,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/** The sandbox's requests about one job (its GET /jobs/{id} and its downloads), in order. */
function requestsOfJob(s: SandboxHandle, jobId: string) {
  return s
    .records()
    .requests.filter((r) => r.path === `/v1/jobs/${jobId}` || r.path.startsWith(`/v1/files/${jobId}/`));
}

/** Every size the file at `path` was seen with while `running` lasts, checked every 2 ms. */
async function sizesSeenDuring<T>(
  path: string,
  running: Promise<T>,
): Promise<{ result: T; sizes: Set<number> }> {
  const sizes = new Set<number>();
  let done = false;
  const result = running.finally(() => {
    done = true;
  });
  while (!done) {
    if (existsSync(path)) sizes.add(statSync(path).size);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return { result: await result, sizes };
}

describe('mediabatch run: promises about downloads, proved directly', () => {
  it('rejects a body shorter or longer than its Content-Length, never saves it, and saves the whole file next', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const p = project(
      'liars',
      `${manifestYaml('liars')}items:\n  - {id: short, prompt: "s [[short-bodyx1]]"}\n  - {id: long, prompt: "l [[long-bodyx1]]"}\n`,
    );
    const watched = await sizesSeenDuring(join(p.outDir, 'short.mp4'), runAgainst(s, p));
    expect(watched.result.code, watched.result.stderr).toBe(0);
    for (const id of ['short', 'long']) {
      const [job] = jobsOfItem(s, 'liars', id);
      const downloads = requestsOfJob(s, job!.id).filter((r) => r.path.startsWith('/v1/files/'));
      // The first answer was a whole 200 with a lying length; the runner refused it and asked again.
      expect(
        downloads.map((r) => r.status),
        id,
      ).toEqual([200, 200]);
      const saved = ledgerRows<{ bytes: number; sha256: string }>(
        p,
        'SELECT f.bytes, f.sha256 FROM files f JOIN attempts a ON a.id = f.attempt_id WHERE a.item_id = ?',
        id,
      );
      expect(saved, id).toEqual([{ bytes: job!.files[0]!.bytes, sha256: job!.files[0]!.sha256 }]);
    }
    // The short body never stood under the real name, not even for a moment.
    const [shortJob] = jobsOfItem(s, 'liars', 'short');
    expect([...watched.sizes]).toEqual([shortJob!.files[0]!.bytes]);
    expect(checkSavedOutputs(s, p, 'liars', ['short', 'long']).problems).toEqual([]);
  });

  it('answers each 403 on a signed URL at once with one GET /jobs/{id}, and downloads from the fresh URL', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const p = project(
      'stale',
      `${manifestYaml('stale')}items:\n  - {id: only, prompt: "o [[url-expiredx3]]"}\n`,
    );
    const result = await runAgainst(s, p);
    expect(result.code, result.stderr).toBe(0);
    const [job] = jobsOfItem(s, 'stale', 'only');
    const all = requestsOfJob(s, job!.id);
    const first = all.findIndex((r) => r.path.startsWith('/v1/files/'));
    const fromFirstDownload = all.slice(first);
    const label = (r: (typeof all)[number]) =>
      `${r.path.startsWith('/v1/files/') ? 'file' : 'job'} ${r.status}`;
    expect(fromFirstDownload.map(label)).toEqual([
      'file 403',
      'job 200',
      'file 403',
      'job 200',
      'file 403',
      'job 200',
      'file 200',
    ]);
    // Each retry used the URL of the fetch just before it, not the refused one.
    const queries = fromFirstDownload.filter((r) => r.path.startsWith('/v1/files/')).map((r) => r.query);
    expect(new Set(queries).size).toBe(4);
    // "At once": no backoff between a refusal and its refresh; three rounds well within a second.
    const elapsed = fromFirstDownload.at(-1)!.at - fromFirstDownload[0]!.at;
    expect(elapsed, 'ms from the first 403 to the saved download').toBeLessThan(1_000);
    expect(checkSavedOutputs(s, p, 'stale', ['only']).problems).toEqual([]);
  });
});
