import { existsSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { saveJobFiles } from '../../src/downloads/save-job-files.js';
import type { Job } from '../../src/service-client/schemas.js';
import { traceDisk } from '../support/disk-trace.js';
import { tempDir } from '../support/temp.js';

const ORIGIN = 'http://files.test';
const BODY = Buffer.from('video bytes');

function job(urls: string[]): Job {
  return {
    id: 'job_1',
    object: 'job',
    capability: 'video.generation',
    model: 'm',
    status: 'succeeded',
    input: { prompt: 'p' },
    output: { files: urls.map((url) => ({ type: 'video', url })) },
    cost: { amount_usd: '0.100000', refunded_usd: '0.000000' },
    error: null,
    metadata: {},
    created_at: '2030-01-01T00:00:00.000Z',
    completed_at: '2030-01-01T00:00:01.000Z',
    expires_at: '2030-01-03T00:00:01.000Z',
  };
}

/** A file host answering each path with a status; a refused URL answers 403. */
function host(statuses: Record<string, number>): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const pool = agent.get(ORIGIN);
  for (const [path, status] of Object.entries(statuses)) {
    pool
      .intercept({ path })
      .reply(status, status === 200 ? BODY : Buffer.from('no'), {
        headers: { 'content-type': 'video/mp4' },
      })
      .persist();
  }
  agents.push(agent);
  return agent;
}

const agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

/** refreshJob that hands out the given jobs in turn and counts its calls. */
function refresher(...jobs: Job[]) {
  const calls = { count: 0 };
  const refreshJob = async () => jobs[Math.min(calls.count++, jobs.length - 1)]!;
  return { calls, refreshJob };
}

describe('saveJobFiles', () => {
  it('saves every file of a job under the item id, numbered when there are several', async () => {
    const dir = join(tempDir(), 'out', 'nested');
    const dispatcher = host({ '/a': 200, '/b': 200 });
    const { calls, refreshJob } = refresher();
    const outcome = await saveJobFiles(job([`${ORIGIN}/a`, `${ORIGIN}/b`]), {
      outputDir: dir,
      itemId: 'shot',
      refreshJob,
      dispatcher,
    });
    expect(outcome).toMatchObject({
      kind: 'saved',
      files: [
        { idx: 0, path: join(dir, 'shot-1.mp4'), bytes: BODY.length },
        { idx: 1, path: join(dir, 'shot-2.mp4'), bytes: BODY.length },
      ],
    });
    expect(readdirSync(dir).sort()).toEqual(['shot-1.mp4', 'shot-2.mp4']);
    expect(calls.count).toBe(0);
  });

  it('makes a folder the caller has made before only again after a save finds it gone', async () => {
    const outputDir = join(tempDir(), 'out');
    const madeFolders = new Set<string>();
    const dispatcher = host({ '/a': 200 });
    const { refreshJob } = refresher();
    const save = () =>
      saveJobFiles(job([`${ORIGIN}/a`]), { outputDir, itemId: 'shot', refreshJob, dispatcher, madeFolders });
    expect(await save()).toMatchObject({ kind: 'saved' });
    expect([...madeFolders]).toEqual([outputDir]);
    rmSync(outputDir, { recursive: true });
    // Trusting the caller's record, the save finds no folder: a local fault, and the record goes.
    expect(await save()).toMatchObject({ kind: 'error', local: true });
    expect(madeFolders.size).toBe(0);
    expect(await save()).toMatchObject({ kind: 'saved' });
    expect(readFileSync(join(outputDir, 'shot.mp4'))).toEqual(BODY);
  });

  it('on a refused URL fetches the job once and saves from the fresh URL', async () => {
    const dir = tempDir();
    const dispatcher = host({ '/old': 403, '/fresh': 200 });
    const { calls, refreshJob } = refresher(job([`${ORIGIN}/fresh`]));
    const outcome = await saveJobFiles(job([`${ORIGIN}/old`]), {
      outputDir: dir,
      itemId: 'shot',
      refreshJob,
      dispatcher,
    });
    expect(outcome).toMatchObject({ kind: 'saved', files: [{ idx: 0, path: join(dir, 'shot.mp4') }] });
    expect(calls.count).toBe(1);
    expect(readFileSync(join(dir, 'shot.mp4'))).toEqual(BODY);
  });

  it('stops after three refreshes when every URL is refused, naming the status', async () => {
    const dispatcher = host({ '/old': 410 });
    const { calls, refreshJob } = refresher(job([`${ORIGIN}/old`]));
    const outcome = await saveJobFiles(job([`${ORIGIN}/old`]), {
      outputDir: tempDir(),
      itemId: 'shot',
      refreshJob,
      dispatcher,
    });
    expect(outcome).toEqual({
      kind: 'error',
      message: 'the service kept refusing the download URL (HTTP 410)',
    });
    expect(calls.count).toBe(3);
  });

  it('is expired when the job has no files, before touching the disk', async () => {
    const parent = tempDir();
    const dir = join(parent, 'never');
    const { calls, refreshJob } = refresher();
    expect(await saveJobFiles(job([]), { outputDir: dir, itemId: 'shot', refreshJob })).toEqual({
      kind: 'expired',
    });
    expect(readdirSync(parent)).toEqual([]);
    expect(calls.count).toBe(0);
  });

  it('is expired when the refreshed job has lost its files', async () => {
    const dispatcher = host({ '/old': 403 });
    const { refreshJob } = refresher(job([]));
    const outcome = await saveJobFiles(job([`${ORIGIN}/old`]), {
      outputDir: tempDir(),
      itemId: 'shot',
      refreshJob,
      dispatcher,
    });
    expect(outcome).toEqual({ kind: 'expired' });
  });

  it('refuses a job whose number of files changed between fetches', async () => {
    const dispatcher = host({ '/old': 403 });
    const { refreshJob } = refresher(job([`${ORIGIN}/x`, `${ORIGIN}/y`]));
    const outcome = await saveJobFiles(job([`${ORIGIN}/old`]), {
      outputDir: tempDir(),
      itemId: 'shot',
      refreshJob,
      dispatcher,
    });
    expect(outcome).toEqual({
      kind: 'error',
      message: 'the job changed its number of files between fetches',
    });
  });

  it('passes a transfer error on as it is, without refreshing', async () => {
    const dispatcher = host({ '/a': 500 });
    const { calls, refreshJob } = refresher();
    const outcome = await saveJobFiles(job([`${ORIGIN}/a`]), {
      outputDir: tempDir(),
      itemId: 'shot',
      refreshJob,
      dispatcher,
    });
    expect(outcome).toEqual({ kind: 'error', message: `download of ${ORIGIN}/a answered HTTP 500` });
    expect(calls.count).toBe(0);
  });

  it('passes its timeout on to each download', async () => {
    // A host that answers nothing: without the timeout the download would wait a minute.
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a`;
      const { refreshJob } = refresher();
      const outcome = await saveJobFiles(job([url]), {
        outputDir: tempDir(),
        itemId: 'shot',
        refreshJob,
        timeoutMs: 200,
      });
      expect(outcome).toMatchObject({ kind: 'error' });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 5_000);

  it('calls an output folder it cannot create a local fault', async () => {
    const parent = tempDir();
    writeFileSync(join(parent, 'file'), 'x');
    const { refreshJob } = refresher();
    const outcome = await saveJobFiles(job([`${ORIGIN}/a`]), {
      outputDir: join(parent, 'file', 'out'),
      itemId: 'shot',
      refreshJob,
    });
    expect(outcome).toMatchObject({ kind: 'error', local: true });
    expect((outcome as { message: string }).message).toMatch(
      new RegExp(`^cannot create the output folder ${parent}/file/out: .*ENOTDIR`),
    );
  });

  it('forgets a folder it made when fetching the job again fails, so the next try makes it again', async () => {
    const outputDir = join(tempDir(), 'out');
    const madeFolders = new Set<string>();
    const dispatcher = host({ '/old': 403 });
    const refreshJob = async (): Promise<Job> => {
      throw new Error('the service did not answer');
    };
    await expect(
      saveJobFiles(job([`${ORIGIN}/old`]), {
        outputDir,
        itemId: 'shot',
        refreshJob,
        dispatcher,
        madeFolders,
      }),
    ).rejects.toThrow('the service did not answer');
    expect(madeFolders.size).toBe(0);
    // A caller that keeps no record gets the same error.
    await expect(
      saveJobFiles(job([`${ORIGIN}/old`]), { outputDir, itemId: 'shot', refreshJob, dispatcher }),
    ).rejects.toThrow('the service did not answer');
  });

  it('runs beforePlace for each file once it is complete, before it takes its name', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'shot-1.mp4'), 'an earlier take');
    const dispatcher = host({ '/a': 200, '/b': 200 });
    const { refreshJob } = refresher();
    const seen: string[] = [];
    const outcome = await saveJobFiles(job([`${ORIGIN}/a`, `${ORIGIN}/b`]), {
      outputDir: dir,
      itemId: 'shot',
      refreshJob,
      dispatcher,
      beforePlace: async (target) => {
        seen.push(`${target}: ${existsSync(target) ? readFileSync(target, 'utf8') : 'nothing yet'}`);
      },
    });
    expect(outcome).toMatchObject({ kind: 'saved' });
    expect(seen).toEqual([
      `${join(dir, 'shot-1.mp4')}: an earlier take`,
      `${join(dir, 'shot-2.mp4')}: nothing yet`,
    ]);
  });

  it('fsyncs the output folder after each file, unless the caller will', async () => {
    const dir = realpathSync(tempDir());
    const dispatcher = host({ '/a': 200 });
    const { refreshJob } = refresher();
    const options = { outputDir: dir, itemId: 'shot', refreshJob, dispatcher };
    const synced = await traceDisk(() => saveJobFiles(job([`${ORIGIN}/a`]), options));
    expect(synced.at(-1)).toBe(`fsync ${dir}`);
    const left = await traceDisk(() => saveJobFiles(job([`${ORIGIN}/a`]), { ...options, syncFolder: false }));
    expect(left.at(-1)).toMatch(/^rename /);
    expect(left).toHaveLength(2);
  });
});
