import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  checkSavedOutputs,
  filesBelow,
  jobFetches,
  manifestYaml,
  project,
  requestsTo,
  runAgainst,
  sha256File,
  spawnRun,
  startClockedSandbox,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';
import { runWatched, urlsRefreshed } from '../../support/watchdog.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const workspace = (limit: number) => [
  { id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: limit },
];

function jobOf(item: string, name: string) {
  return sandbox
    .records()
    .jobs.filter(
      (job) => job.metadata['mediabatch.manifest'] === name && job.metadata['mediabatch.item'] === item,
    );
}

const downloads = () => requestsTo(sandbox, 'GET', '/v1/files/');

describe('mediabatch run: downloads', () => {
  it('refreshes a signed URL that expired while the download waited for a slot', async () => {
    // Six jobs end at the same instant (the clock jumps); four downloads at a time, each about a
    // second long, and URLs that live 0.4 s: the last two expire while they wait for a slot.
    const clocked = await startClockedSandbox({
      workspaces: workspace(8),
      running_seconds: { min: 30, max: 30 },
      url_lifetime_seconds: 0.4,
      faults: { download_bytes_per_second: 2400 },
    });
    sandbox = clocked.sandbox;
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const p = project(
      'refresh',
      `${manifestYaml('refresh', 'concurrency: 8\n')}items:\n${ids.map((id) => `  - {id: ${id}, prompt: clip ${id}}\n`).join('')}`,
    );
    const running = runWatched(sandbox, p, [urlsRefreshed()]);
    await waitUntil(() => sandbox.records().jobs.length === 6, 10_000, 'six jobs');
    clocked.advance(31);
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    const requests = sandbox.records().requests;
    const refused = requests.flatMap((entry, index) =>
      entry.path.startsWith('/v1/files/') && entry.status === 403 ? [index] : [],
    );
    expect(refused.length).toBeGreaterThan(0);
    for (const index of refused) {
      // The refusal was followed by a fresh view of that job and a successful download of it.
      const jobId = requests[index]!.path.split('/')[3];
      const after = requests.slice(index + 1);
      expect(after.some((r) => r.method === 'GET' && r.path === `/v1/jobs/${jobId}`)).toBe(true);
      expect(after.some((r) => r.path.startsWith(`/v1/files/${jobId}/`) && r.status === 200)).toBe(true);
    }
    expect(checkSavedOutputs(sandbox, p, 'refresh', ids).problems).toEqual([]);
  });

  it('retries a download cut mid-transfer and leaves no temporary file', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'cut',
      `${manifestYaml('cut')}items:\n  - {id: cut, prompt: "cut [[cut-downloadx1]]"}\n`,
    );
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    const job = jobOf('cut', 'cut')[0]!;
    expect(downloads().filter((entry) => entry.jobId === job.id).length).toBe(2);
    expect(sha256File(join(p.outDir, 'cut.mp4'))).toBe(job.files[0]!.sha256);
    expect(checkSavedOutputs(sandbox, p, 'cut', ['cut']).problems).toEqual([]);
  });

  it('restores a deleted or altered file on a re-run, and downloads nothing when all is intact', async () => {
    sandbox = await startTestSandbox();
    const ids = ['a', 'b', 'c'];
    const p = project(
      'restore',
      `${manifestYaml('restore')}items:\n${ids.map((id) => `  - {id: ${id}, prompt: p ${id}}\n`).join('')}`,
    );
    expect(await runAgainst(sandbox, p)).toMatchObject({ code: 0 });
    const before = downloads().length;

    rmSync(join(p.outDir, 'a.mp4'));
    const altered = readFileSync(join(p.outDir, 'b.mp4'));
    altered.writeUInt8(altered.readUInt8(altered.length - 3) ^ 0xff, altered.length - 3);
    writeFileSync(join(p.outDir, 'b.mp4'), altered);
    const posts = requestsTo(sandbox, 'POST', '/v1/videos').length;
    const second = await runAgainst(sandbox, p);
    expect(second.code, second.stderr).toBe(0);
    const refetched = downloads()
      .slice(before)
      .map((entry) => entry.jobId);
    expect(refetched.sort()).toEqual([jobOf('a', 'restore')[0]!.id, jobOf('b', 'restore')[0]!.id].sort());
    expect(requestsTo(sandbox, 'POST', '/v1/videos').length).toBe(posts);
    expect(checkSavedOutputs(sandbox, p, 'restore', ids).problems).toEqual([]);

    const count = downloads().length;
    const fetches = jobFetches(sandbox).length;
    expect(await runAgainst(sandbox, p)).toMatchObject({ code: 0 });
    expect(downloads().length).toBe(count);
    expect(jobFetches(sandbox).length).toBe(fetches);
  });

  it('marks an item expired when its outputs are gone before the download, and regenerates it on request', async () => {
    // Outputs are kept 1 s; the sandbox's clock jumps past the job's end and that second at once.
    const clocked = await startClockedSandbox({
      running_seconds: { min: 30, max: 30 },
      retention_seconds: 1,
    });
    sandbox = clocked.sandbox;
    const p = project('gone', `${manifestYaml('gone')}items:\n  - {id: late, prompt: too late}\n`);
    const run = spawnRun(sandbox, p, ['--json']);
    await waitUntil(() => jobOf('late', 'gone').length === 1, 10_000, 'the job');
    clocked.advance(40);
    const first = await run.done;
    expect(first.code, first.stderr).toBe(1);
    const item = JSON.parse(first.stdout).items[0];
    expect(item).toMatchObject({ id: 'late', state: 'expired', files: [], error: { code: 'expired' } });
    expect(downloads()).toHaveLength(0);
    expect(existsSync(join(p.outDir, 'late.mp4'))).toBe(false);

    sandbox.update({ retention_seconds: 3600, running_seconds: { min: 0.1, max: 0.1 } });
    const posts = requestsTo(sandbox, 'POST', '/v1/videos').length;
    expect(await runAgainst(sandbox, p)).toMatchObject({ code: 1 });
    expect(requestsTo(sandbox, 'POST', '/v1/videos').length).toBe(posts);

    const regenerated = await runAgainst(sandbox, p, ['--regenerate-expired', '--json']);
    expect(regenerated.code, regenerated.stderr).toBe(0);
    const jobs = jobOf('late', 'gone');
    expect(jobs).toHaveLength(2);
    expect(jobs[1]!.metadata['mediabatch.attempt']).toBe('2');
    expect(sha256File(join(p.outDir, 'late.mp4'))).toBe(jobs[1]!.files[0]!.sha256);
    expect(JSON.parse(regenerated.stdout).items[0]).toMatchObject({ state: 'done', job_id: jobs[1]!.id });
  });

  it('with --regenerate-expired resubmits an item whose outputs expired during the run', async () => {
    const clocked = await startClockedSandbox({
      running_seconds: { min: 30, max: 30 },
      retention_seconds: 1,
    });
    sandbox = clocked.sandbox;
    const p = project('again', `${manifestYaml('again')}items:\n  - {id: late, prompt: once more}\n`);
    const run = spawnRun(sandbox, p, ['--regenerate-expired', '--json']);
    await waitUntil(() => jobOf('late', 'again').length === 1, 10_000, 'the job');
    // Only jobs created from now on are short and kept long.
    sandbox.update({ retention_seconds: 3600, running_seconds: { min: 0.1, max: 0.1 } });
    clocked.advance(40);
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    const jobs = jobOf('late', 'again');
    expect(jobs).toHaveLength(2);
    expect(JSON.parse(result.stdout).items[0]).toMatchObject({ state: 'done', job_id: jobs[1]!.id });
    expect(sha256File(join(p.outDir, 'late.mp4'))).toBe(jobs[1]!.files[0]!.sha256);
  });

  it('removes temporary files left in the output folder at start, and nothing else', async () => {
    sandbox = await startTestSandbox();
    const p = project('tidy', `${manifestYaml('tidy')}items:\n  - {id: a, prompt: tidy}\n`);
    mkdirSync(p.outDir, { recursive: true });
    writeFileSync(join(p.outDir, '.0a1b2c3d4e5f.mbtmp'), 'half a file');
    writeFileSync(join(p.outDir, 'notes.txt'), 'mine');
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    expect(filesBelow(p.outDir)).toEqual(['a.json', 'a.mp4', 'notes.txt']);
  });

  it('writes files only inside output.dir', async () => {
    sandbox = await startTestSandbox();
    const ids = ['x..y', 'v1.final', 'Name_With-Dash'];
    const p = project(
      'inside',
      `${manifestYaml('inside', 'output: {dir: renders/../final/clips}\n')}items:\n${ids.map((id, n) => `  - {id: "${id}", prompt: shot ${n}}\n`).join('')}`,
    );
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    const written = filesBelow(p.dir).filter(
      (path) => path !== 'batch.yaml' && !path.startsWith('.mediabatch/'),
    );
    expect(written.sort()).toEqual(
      [
        'final/clips/.mediabatch-owner.json',
        'final/clips/index.html', // the gallery the run leaves, inside output.dir too
        ...ids.flatMap((id) => [`final/clips/${id}.json`, `final/clips/${id}.mp4`]),
      ].sort(),
    );

    const outside = project(
      'escape',
      `${manifestYaml('escape')}items:\n  - {id: ../../outside, prompt: nope}\n`,
    );
    const refused = await runAgainst(sandbox, outside);
    expect(refused.code, refused.stderr).toBe(2);
    expect(requestsTo(sandbox, 'POST', '/v1/videos')).toHaveLength(3);
    expect(filesBelow(outside.dir)).toEqual(['batch.yaml']);
  });
});
