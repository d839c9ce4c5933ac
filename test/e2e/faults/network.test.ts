import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  allPosts,
  attemptRows,
  manifestYaml,
  project,
  runAgainst,
  startClockedSandbox,
  startTestSandbox,
} from '../../support/e2e.js';
import { neverPaidTwice, runWatched, urlsRefreshed } from '../../support/watchdog.js';
import { expectAllDoneOnce, expectNoStackTrace, itemsYaml, sleep, until } from './support.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
const jobsOf = (s: SandboxHandle, name: string) =>
  s.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name);

/** How many times each Idempotency-Key was POSTed. */
function postsPerKey(s: SandboxHandle): Map<string, number> {
  const counts = new Map<string, number>();
  for (const post of allPosts(s)) {
    if (post.idempotencyKey) counts.set(post.idempotencyKey, (counts.get(post.idempotencyKey) ?? 0) + 1);
  }
  return counts;
}

describe('network faults', () => {
  it('waits out a service outage in the middle of a run and finishes every item, paid once', async () => {
    // The first jobs run for a minute on the sandbox's clock, which the test moves on: they are
    // still running, and items still to submit, when the outage comes, however slow the machine.
    const clocked = await startClockedSandbox({ running_seconds: { min: 60, max: 60 } });
    const s = clocked.sandbox;
    sandbox = s;
    const name = 'outage';
    const all = ids('o', 6);
    const p = project(name, `${manifestYaml(name)}${itemsYaml(all)}`);
    const running = runAgainst(s, p, ['--json']);

    // Some jobs accepted and some items still to submit: the service goes away, then comes back.
    await until(() => jobsOf(s, name).length >= 2, 'the first accepted jobs', 20_000, running);
    await s.stopListening();
    expect(jobsOf(s, name).length).toBeLessThan(all.length);
    await sleep(1500);
    s.update({ running_seconds: { min: 0.3, max: 0.6 } });
    await s.resumeListening();
    clocked.advance(61);

    const result = await running;
    expectNoStackTrace(result);
    expectAllDoneOnce(s, p, name, result, all);
    // Every POST used a key the ledger committed first; none was invented after the outage.
    const keys = new Set(attemptRows(p).map((row) => row.idempotency_key));
    expect([...postsPerKey(s).keys()].every((key) => keys.has(key))).toBe(true);
  }, 60_000);

  it('resends the same key when answers never arrive in time, and never pays twice', async () => {
    const s = await startTestSandbox({ faults: { latency_ms: { min: 2500, max: 2500 } } });
    sandbox = s;
    const name = 'slow-answers';
    const all = ids('l', 4);
    const p = project(name, `${manifestYaml(name)}${itemsYaml(all)}`);
    // undici checks its timeouts on a coarse (~1 s) clock, so 0.5 s means "gone within 1.5 s".
    const running = runWatched(s, p, [neverPaidTwice(name)], ['--json'], { MEDIABATCH_HTTP_TIMEOUT: '0.5' });

    // The sandbox stores each job 2.5 s after its POST arrives, long after the client gave up, so
    // every first POST is a paid job whose answer was lost: only resending its own key finds it.
    await until(
      () => [...postsPerKey(s).values()].some((count) => count >= 2),
      'a resent key',
      20_000,
      running,
    );
    await until(() => jobsOf(s, name).length >= 1, 'a job stored behind a timed-out POST', 20_000, running);
    s.update({ faults: { latency_ms: { min: 0, max: 0 } } });

    const result = await running;
    expectNoStackTrace(result);
    expectAllDoneOnce(s, p, name, result, all);
    const rows = attemptRows(p);
    expect(rows).toHaveLength(all.length);
    const perKey = postsPerKey(s);
    expect(Math.max(...rows.map((row) => perKey.get(row.idempotency_key) ?? 0))).toBeGreaterThanOrEqual(2);
    expect([...perKey.keys()].sort()).toEqual(rows.map((row) => row.idempotency_key).sort());
  }, 60_000);

  it('keeps every downloaded file intact when downloads are cut mid-stream', async () => {
    const s = await startTestSandbox({ faults: { download_cut: 0.3 } });
    sandbox = s;
    const name = 'cut-downloads';
    const all = ids('c', 6);
    // Half the items have their first three downloads cut for sure; every download may be cut.
    const prompt = (id: string) =>
      Number(id.slice(1)) % 2 === 0 ? `shot ${id} [[cut-downloadx3]]` : `shot ${id}`;
    const p = project(name, `${manifestYaml(name)}${itemsYaml(all, prompt)}`);

    const result = await runAgainst(s, p, ['--json']);
    expectNoStackTrace(result);
    expectAllDoneOnce(s, p, name, result, all);
    const downloads = s.records().requests.filter((request) => request.path.startsWith('/v1/files/'));
    expect(downloads.length).toBeGreaterThanOrEqual(all.length + 9);
  }, 60_000);

  it('refreshes signed URLs that expire while slow downloads queue, and saves every file', async () => {
    const s = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 8 }],
      url_lifetime_seconds: 0.4,
      faults: { download_bytes_per_second: 4000 },
    });
    sandbox = s;
    const name = 'slow-downloads';
    const all = ids('s', 8);
    const p = project(name, `${manifestYaml(name)}${itemsYaml(all)}`);

    const result = await runWatched(s, p, [urlsRefreshed()], ['--json']);
    expectNoStackTrace(result);
    expectAllDoneOnce(s, p, name, result, all);
    const requests = s.records().requests;
    // Each download takes about 0.6 s, longer than a URL lives; the ones that waited for a slot
    // met an expired URL (403) and went on with a fresh one from GET /jobs/{id}.
    const expired = requests.filter(
      (request) => request.path.startsWith('/v1/files/') && request.status === 403,
    );
    expect(expired.length).toBeGreaterThan(0);
    const saved = requests.filter(
      (request) => request.path.startsWith('/v1/files/') && request.status === 200,
    );
    expect(saved).toHaveLength(all.length);
  }, 60_000);

  it('waits out a workspace filled by another key through 429 storms without new attempts', async () => {
    const foreignKey = 'mg_foreign_key_11111111';
    // The sandbox's clock is the test's: the other client's jobs end only when the test moves it on,
    // never because our run was slow to start on a loaded machine.
    const clocked = await startClockedSandbox({
      keys: [
        { key: 'mg_test_key_000000000000', id: 1, workspace: 'ws_test' },
        { key: foreignKey, id: 2, workspace: 'ws_test' },
      ],
    });
    const s = clocked.sandbox;
    sandbox = s;
    let foreignSeq = 0;
    const foreign = (seconds: number) =>
      fetch(`${s.baseUrl}/videos/generation`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${foreignKey}`,
          'content-type': 'application/json',
          'idempotency-key': `foreign-${++foreignSeq}`,
        },
        body: JSON.stringify({
          input: { prompt: `other team [[run:${seconds}]]`, seconds: 2, definition: '480p' },
        }),
      }).then((response) => response.status);
    // Another client of the workspace holds all three slots; its jobs end one after another, at 60,
    // 120 and 180 s on the sandbox's clock.
    expect(await Promise.all([foreign(60), foreign(120), foreign(180)])).toEqual([202, 202, 202]);
    expect(s.account().active).toBe(3);

    const name = 'storm';
    const all = ids('t', 5);
    const p = project(name, `${manifestYaml(name)}${itemsYaml(all)}`);
    const running = runAgainst(s, p, ['--json']);
    const ours = (status: number) =>
      allPosts(s).filter((post) => post.keyId === 1 && post.status === status).length;
    // A storm: our POSTs are turned away, and sent again, while every slot stays taken.
    await until(() => ours(429) >= 3, 'our POSTs answered 429 while the workspace is full', 20_000, running);
    expect(jobsOf(s, name)).toHaveLength(0);
    // The first slot frees: the run takes it, while the other two stay taken (more 429s may come).
    clocked.advance(61);
    await until(() => jobsOf(s, name).length >= 1, 'our first job in the freed slot', 20_000, running);
    clocked.advance(120);
    const result = await running;

    expectNoStackTrace(result);
    expectAllDoneOnce(s, p, name, result, all);
    const rows = attemptRows(p);
    expect(rows.map((row) => row.item_id).sort()).toEqual([...all].sort());
    expect(rows.every((row) => row.http_status === 202 && row.seq === 1)).toBe(true);
    // Every POST of ours, 429 or 202, carried the key of its item's one attempt.
    const keys = new Set(rows.map((row) => row.idempotency_key));
    const ourPosts = allPosts(s).filter((post) => post.keyId === 1);
    expect(ourPosts.every((post) => keys.has(post.idempotencyKey ?? ''))).toBe(true);
    expect(ours(429)).toBeGreaterThanOrEqual(3);
    expect(ours(202)).toBe(all.length);
    expect(s.records().jobs.filter((job) => job.apiKeyId === 2)).toHaveLength(3);
  }, 60_000);
});
