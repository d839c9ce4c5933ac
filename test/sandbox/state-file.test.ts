import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { MediaGenClient } from '../../src/service-client/index.js';
import { BASE, body, FakeClock, newKey, ROOMY } from './helpers.js';

const dirs: string[] = [];
const open: SandboxHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sandbox) => sandbox.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function statePath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mediabatch-state-'));
  dirs.push(dir);
  return join(dir, 'sandbox.jsonl');
}

async function start(path: string, clock: FakeClock, config = {}) {
  const sandbox = await startSandbox(
    { ...BASE, ...ROOMY, ...config },
    { port: 0, now: clock.now, statePath: path },
  );
  open.push(sandbox);
  return { sandbox, client: new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey }) };
}

describe('sandbox: a state file keeps its jobs across restarts', () => {
  it('knows the old jobs, replays their keys, keeps the wallet and serves old download URLs', async () => {
    const path = statePath();
    const clock = new FakeClock();
    const first = await start(path, clock);
    const key = newKey();
    const done = await first.client.createVideoJob(body('a fox'), key);
    const running = await first.client.createVideoJob(body('a hare [[run:10]]'), newKey());
    clock.advance(3.5);
    const finished = await first.client.getJob(done.data.id);
    const oldUrl = finished.data.output.files[0]!.url;
    const balance = first.sandbox.account().balanceMicros;
    await first.sandbox.close();

    const second = await start(path, clock);
    const again = await second.client.getJob(done.data.id);
    expect(again.data).toMatchObject({ status: 'succeeded', created_at: done.data.created_at });
    const replay = await second.client.createVideoJob(body('a fox'), key);
    expect(replay.data.id).toBe(done.data.id);
    expect((await second.client.getJob(running.data.id)).data.status).toBe('running');
    expect(second.sandbox.records().jobs.map((job) => job.id)).toEqual([done.data.id, running.data.id]);
    expect(second.sandbox.account().balanceMicros).toBe(balance);
    // Same signing secret: a URL handed out before the restart still downloads the same bytes.
    const port = new URL(oldUrl).port;
    const moved = oldUrl.replace(`:${port}/`, `:${second.sandbox.port}/`);
    const file = await request(moved);
    expect(file.statusCode).toBe(200);
    const bytes = Buffer.from(await file.body.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(
      second.sandbox.records().jobs[0]!.files[0]!.sha256,
    );
    const list = await second.client.listJobs({ limit: 10 });
    expect(list.data.data.map((job) => job.id)).toEqual([running.data.id, done.data.id]);
  });

  it('has each job on disk before its POST is answered (nothing waits for close)', async () => {
    const path = statePath();
    const clock = new FakeClock();
    const first = await start(path, clock);
    const accepted = await first.client.createVideoJob(body('a crane'), newKey());
    // No close: as if the process were killed right after answering.
    const copy = `${path}.copy`;
    writeFileSync(copy, readFileSync(path));
    const second = await start(copy, clock);
    expect((await second.client.getJob(accepted.data.id)).data.id).toBe(accepted.data.id);
  });

  it('keeps xN fault counts, so a fault that was used up stays used up', async () => {
    const path = statePath();
    const clock = new FakeClock();
    const first = await start(path, clock);
    const prompt = 'an owl [[500-beforex1]]';
    await expect(first.client.createVideoJob(body(prompt), newKey())).rejects.toMatchObject({ status: 500 });
    await first.sandbox.close();
    const second = await start(path, clock);
    expect((await second.client.createVideoJob(body(prompt), newKey())).status).toBe(202);
  });

  it('ignores a last line cut by a crash and names the line of a corrupt one', async () => {
    const path = statePath();
    const clock = new FakeClock();
    const first = await start(path, clock);
    const accepted = await first.client.createVideoJob(body('a lynx'), newKey());
    await first.sandbox.close();
    appendFileSync(path, '{"kind":"job","job":{"id":"job_cut');
    const second = await start(path, clock);
    expect(second.sandbox.records().jobs.map((job) => job.id)).toEqual([accepted.data.id]);
    await second.sandbox.close();
    appendFileSync(path, 'not json\n');
    await expect(start(path, clock)).rejects.toThrow(/sandbox\.jsonl:2: not a sandbox state line/);
  });
});

describe('sandbox: what goes wrong inside it is told, not printed', () => {
  it('a state file it cannot write answers the POST 500 and tells onProblem, writing nothing to the console', async () => {
    const path = statePath();
    const told: Array<{ kind: string; message: string }> = [];
    const printed: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const sandbox = await startSandbox(
      { ...BASE, ...ROOMY },
      { port: 0, now: new FakeClock().now, statePath: path, onProblem: (problem) => told.push(problem) },
    );
    open.push(sandbox);
    const client = new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey });
    rmSync(join(path, '..'), { recursive: true, force: true });
    process.stderr.write = ((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const refused = await client.createVideoJob(body('a fox'), newKey()).catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 500 });
    } finally {
      process.stderr.write = write;
      // Its folder back, so that closing it can write the file whole.
      mkdirSync(join(path, '..'));
    }
    expect(told).toEqual([
      { kind: 'state_not_written', message: expect.stringContaining('cannot write its state file') },
    ]);
    expect(printed).toEqual([]);
  });
});
