import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../../src/sandbox/index.js';
import { MediaGenClient } from '../../../src/service-client/index.js';
import { waitForOutput } from '../../support/cli.js';
import {
  checkSavedOutputs,
  type E2eProject,
  fastConfig,
  filesBelow,
  killRunWhen,
  ledgerRows,
  manifestYaml,
  project,
  requestsTo,
  runAgainst,
  sha256File,
  startClockedSandbox,
  type startTestSandbox,
  unansweredSubmission,
  waitUntil,
} from '../../support/e2e.js';
import { finishedJobsFetchedWithin, runWatched } from '../../support/watchdog.js';

const sandboxes: SandboxHandle[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.close()));
});

async function newSandbox(
  overrides: Parameters<typeof startTestSandbox>[0] = {},
  port = 0,
): Promise<SandboxHandle> {
  const sandbox = await startSandbox(fastConfig(overrides), { port });
  sandboxes.push(sandbox);
  return sandbox;
}

const workspace = [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 10 }];
const itemsYaml = (ids: string[], prompt = 'scene') =>
  `items:\n${ids.map((id) => `  - {id: ${id}, prompt: ${prompt} ${id}}\n`).join('')}`;
const postsOf = (sandbox: SandboxHandle) => requestsTo(sandbox, 'POST', '/v1/videos');
const jobsOf = (sandbox: SandboxHandle, name: string, item: string) =>
  sandbox
    .records()
    .jobs.filter(
      (job) => job.metadata['mediabatch.manifest'] === name && job.metadata['mediabatch.item'] === item,
    );

describe('mediabatch run: resuming after SIGKILL', () => {
  it('completes after kills at several points with one net-charged job per item', async () => {
    // Jobs last 30 s on the sandbox's clock: each kill point is reached before anything can finish.
    const clocked = await startClockedSandbox({
      workspaces: workspace,
      running_seconds: { min: 30, max: 30 },
    });
    sandboxes.push(clocked.sandbox);
    const sandbox = clocked.sandbox;
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const p = project('killed', `${manifestYaml('killed', 'concurrency: 3\n')}${itemsYaml(ids)}`);
    const jobs = () => sandbox.records().jobs.length;
    await killRunWhen(sandbox, p, (child) => waitForOutput(child, (text) => text.includes(': in flight')));
    await killRunWhen(sandbox, p, () => waitUntil(() => jobs() === 3, 10_000, 'three jobs'));
    clocked.advance(31);
    // The three jobs are done at the service: kill right after the first is saved, then once the
    // next three are submitted.
    await killRunWhen(sandbox, p, (child) => waitForOutput(child, (text) => text.includes(': done')));
    await killRunWhen(sandbox, p, () => waitUntil(() => jobs() === 6, 10_000, 'six jobs'));
    clocked.advance(31);
    const result = await runAgainst(sandbox, p, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).totals).toMatchObject({ items: 6, done: 6 });
    expect(checkSavedOutputs(sandbox, p, 'killed', ids).problems).toEqual([]);
  });

  it('after a kill mid-download, removes the temporary file and saves the file whole', async () => {
    const sandbox = await newSandbox({ faults: { download_bytes_per_second: 1000 } });
    const p = project('mid-download', `${manifestYaml('mid-download')}${itemsYaml(['a', 'b'])}`);
    // A download's temporary file (save-file.ts: a dot, 12 hex digits): the output folder's write
    // probe and owner mark are .mbtmp files too, but live for a moment, and a kill that came as
    // one of them was seen found nothing to remove.
    const temps = () => filesBelow(p.outDir).filter((path) => /(^|[/\\])\.[0-9a-f]{12}\.mbtmp$/.test(path));
    await killRunWhen(sandbox, p, () => waitUntil(() => temps().length > 0, 10_000, 'a temp file'));
    const left = temps().length;
    expect(filesBelow(p.outDir).filter((path) => path.endsWith('.mp4'))).toEqual([]);
    sandbox.update({ faults: { download_bytes_per_second: 10_000_000 } });
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`removed ${left} temporary file`);
    expect(checkSavedOutputs(sandbox, p, 'mid-download', ['a', 'b']).problems).toEqual([]);
  });
  it('trusts files saved just before a kill, even once the outputs are gone at the service', async () => {
    const clocked = await startClockedSandbox();
    sandboxes.push(clocked.sandbox);
    const sandbox = clocked.sandbox;
    const p = project('saved', `${manifestYaml('saved')}${itemsYaml(['a', 'b'])}`);
    expect(await runAgainst(sandbox, p)).toMatchObject({ code: 0 });
    // A kill between committing the saved files and marking the item done leaves this state.
    const db = new Database(p.ledger);
    db.prepare(`UPDATE items SET state = 'in_flight' WHERE item_id = 'a'`).run();
    db.close();
    clocked.advance(49 * 3600);
    const downloads = requestsTo(sandbox, 'GET', '/v1/files/').length;
    const result = await runAgainst(sandbox, p, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).items.map((item: { state: string }) => item.state)).toEqual([
      'done',
      'done',
    ]);
    expect(requestsTo(sandbox, 'GET', '/v1/files/')).toHaveLength(downloads);
    expect(checkSavedOutputs(sandbox, p, 'saved', ['a', 'b']).problems).toEqual([]);
  });
});

describe('mediabatch run: unanswered submissions', () => {
  it('resends an unanswered attempt with its own key and body and adopts the job', async () => {
    const sandbox = await newSandbox();
    const p = project('unanswered', `${manifestYaml('unanswered')}${itemsYaml(['a'])}`);
    const { key, job } = await unansweredSubmission(sandbox, p, 'unanswered');
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    const resent = postsOf(sandbox).slice(1);
    expect(resent).toHaveLength(1);
    expect(resent[0]).toMatchObject({ idempotencyKey: key, status: 202, jobId: job.id });
    expect(sandbox.records().jobs).toHaveLength(1);
    expect(checkSavedOutputs(sandbox, p, 'unanswered', ['a']).problems).toEqual([]);
  });

  it('resends the old request first even after the item was edited, then submits the edit', async () => {
    const sandbox = await newSandbox();
    const p = project('edited', `${manifestYaml('edited')}${itemsYaml(['a'], 'before')}`);
    const { key, job } = await unansweredSubmission(sandbox, p, 'edited');
    writeFileSync(p.manifest, `${manifestYaml('edited')}${itemsYaml(['a'], 'after')}`);
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    const resent = postsOf(sandbox).slice(1);
    // Same key, same body (else 409): the old job is replayed, not paid twice.
    expect(resent[0]).toMatchObject({ idempotencyKey: key, status: 202, jobId: job.id });
    expect(resent).toHaveLength(2);
    const jobs = jobsOf(sandbox, 'edited', 'a');
    expect(jobs.map((candidate) => candidate.input.prompt)).toEqual(['before a', 'after a']);
    expect(jobs.filter((candidate) => candidate.idempotencyKey === key)).toHaveLength(1);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(jobs[1]!.files[0]!.sha256);
    const attempts = ledgerRows<{ seq: number; job_id: string }>(
      p,
      'SELECT seq, job_id FROM attempts ORDER BY seq',
    );
    expect(attempts).toEqual([
      { seq: 1, job_id: job.id },
      { seq: 2, job_id: jobs[1]!.id },
    ]);
  });
  it('resolves an unanswered attempt of an item since removed from the manifest', async () => {
    const sandbox = await newSandbox();
    const p = project('removed', `${manifestYaml('removed')}${itemsYaml(['a'])}`);
    const { key, job } = await unansweredSubmission(sandbox, p, 'removed');
    writeFileSync(p.manifest, `${manifestYaml('removed')}${itemsYaml(['b'])}`);
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    expect(
      postsOf(sandbox)
        .filter((entry) => entry.idempotencyKey === key)
        .slice(1),
    ).toMatchObject([{ status: 202, jobId: job.id }]);
    const [attempt] = ledgerRows<{
      state: string;
      job_id: string;
      reserved_micros: number;
      amount_micros: number;
    }>(p, `SELECT state, job_id, reserved_micros, amount_micros FROM attempts WHERE item_id = 'a'`);
    expect(attempt).toEqual({
      state: 'accepted',
      job_id: job.id,
      reserved_micros: 0,
      amount_micros: job.amountMicros,
    });
    expect(checkSavedOutputs(sandbox, p, 'removed', ['b']).problems).toEqual([]);
  });
});

describe('mediabatch run: attempts unanswered for more than 23 hours', () => {
  function ageAttempts(p: E2eProject, hours: number): void {
    const db = new Database(p.ledger);
    db.prepare('UPDATE attempts SET created_at = ?').run(
      new Date(Date.now() - hours * 3_600_000).toISOString(),
    );
    db.close();
  }

  it('adopts the job found in GET /jobs without any POST', async () => {
    const sandbox = await newSandbox();
    const p = project('old-found', `${manifestYaml('old-found')}${itemsYaml(['a'])}`);
    const { job } = await unansweredSubmission(sandbox, p, 'old-found');
    ageAttempts(p, 25);
    const lists = requestsTo(sandbox, 'GET', '/v1/jobs').filter((entry) => entry.path === '/v1/jobs').length;
    const result = await runAgainst(sandbox, p, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(postsOf(sandbox)).toHaveLength(1);
    const searches = requestsTo(sandbox, 'GET', '/v1/jobs').filter((entry) => entry.path === '/v1/jobs');
    expect(searches.length).toBeGreaterThan(lists);
    expect(JSON.parse(result.stdout).items[0]).toMatchObject({ state: 'done', job_id: job.id });
    expect(checkSavedOutputs(sandbox, p, 'old-found', ['a']).problems).toEqual([]);
  });

  it('watches an adopted job that is still running and saves it within seconds of its end', async () => {
    const sandbox = await newSandbox();
    const p = project(
      'old-running',
      `${manifestYaml('old-running')}items:\n  - {id: a, prompt: "slow [[run:4]]"}\n`,
    );
    const { job } = await unansweredSubmission(sandbox, p, 'old-running');
    ageAttempts(p, 25);
    const before = sandbox.records().requests.length;
    const result = await runWatched(sandbox, p, [finishedJobsFetchedWithin('old-running', 3_000)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`found job ${job.id} of an old unanswered submission; adopting it`);
    const later = sandbox.records().requests.slice(before);
    // It was adopted from the search while still running, without any POST.
    const search = later.find((entry) => entry.path === '/v1/jobs' && entry.query?.includes('created_after'));
    const done = jobsOf(sandbox, 'old-running', 'a')[0]!;
    expect(search!.at).toBeLessThan(Date.parse(done.completedAt!));
    expect(later.filter((entry) => entry.method === 'POST')).toEqual([]);
    const download = later.find((entry) => entry.path.startsWith('/v1/files/') && entry.status === 200);
    expect(
      download!.at - Date.parse(done.completedAt!),
      'ms from the end of the job to its download',
    ).toBeLessThan(3_000);
    expect(checkSavedOutputs(sandbox, p, 'old-running', ['a']).problems).toEqual([]);
  });

  it('resends with its own key and body when no matching job exists', async () => {
    const first = await newSandbox();
    const p = project('old-lost', `${manifestYaml('old-lost')}${itemsYaml(['a'])}`);
    const { key, body } = await unansweredSubmission(first, p, 'old-lost');
    ageAttempts(p, 25);
    // The same service, but it never stored the job: only a job of another attempt of the same item.
    await first.close();
    const sandbox = await newSandbox({}, first.port);
    const decoy = JSON.parse(body);
    decoy.metadata['mediabatch.attempt'] = '9';
    await new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey }).createVideoJob(
      JSON.stringify(decoy),
      'decoy-key',
    );
    const result = await runAgainst(sandbox, p, ['--json']);
    expect(result.code, result.stderr).toBe(0);
    const posts = postsOf(sandbox).filter((entry) => entry.idempotencyKey !== 'decoy-key');
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({ idempotencyKey: key, status: 202 });
    const job = sandbox.records().jobs.find((candidate) => candidate.idempotencyKey === key)!;
    expect(JSON.parse(result.stdout).items[0]).toMatchObject({ state: 'done', job_id: job.id });
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(job.files[0]!.sha256);
  });
});

describe('mediabatch run: changed items', () => {
  it('regenerates only the item whose prompt changed after it was done', async () => {
    const sandbox = await newSandbox();
    const ids = ['a', 'b', 'c'];
    const p = project('changed', `${manifestYaml('changed')}${itemsYaml(ids)}`);
    expect(await runAgainst(sandbox, p)).toMatchObject({ code: 0 });
    const before = Object.fromEntries(ids.map((id) => [id, sha256File(join(p.outDir, `${id}.mp4`))]));
    const posts = postsOf(sandbox).length;
    const downloads = requestsTo(sandbox, 'GET', '/v1/files/').length;

    writeFileSync(
      p.manifest,
      `${manifestYaml('changed')}${itemsYaml(ids).replace('scene b', 'new scene b')}`,
    );
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    const newPosts = postsOf(sandbox).slice(posts);
    expect(newPosts).toHaveLength(1);
    const jobs = jobsOf(sandbox, 'changed', 'b');
    expect(jobs).toHaveLength(2);
    expect(jobs[1]).toMatchObject({ input: expect.objectContaining({ prompt: 'new scene b' }) });
    expect(
      requestsTo(sandbox, 'GET', '/v1/files/')
        .slice(downloads)
        .map((entry) => entry.jobId),
    ).toEqual([jobs[1]!.id]);
    expect(sha256File(join(p.outDir, 'b.mp4'))).toBe(jobs[1]!.files[0]!.sha256);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(before.a);
    expect(sha256File(join(p.outDir, 'c.mp4'))).toBe(before.c);
    expect(jobsOf(sandbox, 'changed', 'a')).toHaveLength(1);
    expect(jobsOf(sandbox, 'changed', 'c')).toHaveLength(1);
  });

  it('follows the old job of an item edited while it ran before submitting the edit', async () => {
    const sandbox = await newSandbox({ workspaces: workspace });
    const old = 'old take [[run:1.5]] [[fail:provider_unavailable]]';
    const p = project(
      'moved',
      `${manifestYaml('moved', 'concurrency: 1\n')}items:\n  - {id: a, prompt: "${old}"}\n`,
    );
    await killRunWhen(sandbox, p, () =>
      waitUntil(
        () =>
          ledgerRows<{ n: number }>(p, `SELECT COUNT(*) AS n FROM attempts WHERE state = 'accepted'`)[0]!.n >
          0,
        10_000,
        'the accepted job',
      ),
    );
    writeFileSync(
      p.manifest,
      `${manifestYaml('moved', 'concurrency: 1\n')}items:\n  - {id: a, prompt: new take}\n`,
    );
    const result = await runAgainst(sandbox, p);
    expect(result.code, result.stderr).toBe(0);
    const [first, second] = jobsOf(sandbox, 'moved', 'a');
    expect(first!.status).toBe('failed');
    // Concurrency 1 counts the old job too: the edit goes out once it has finished.
    expect(Date.parse(second!.createdAt)).toBeGreaterThanOrEqual(Date.parse(first!.completedAt!));
    // Its refund reached the ledger, so spent matches the service.
    const net = ledgerRows<{ net: number }>(
      p,
      'SELECT SUM(amount_micros - refunded_micros) AS net FROM attempts',
    );
    expect(net[0]!.net).toBe(second!.amountMicros);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(second!.files[0]!.sha256);
  });
});
