import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { spawnCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  filesBelow,
  jobsOfItem,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sandboxNetByItem,
  sha256File,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

/**
 * A redo killed at its riskiest moments: with its POSTs unanswered, and while the earlier take is
 * being kept beside the new one. Plain re-runs finish it: one new charge per item, the earlier
 * take intact under its take name, the new one under the item's name.
 */
describe('run --redo under SIGKILL', () => {
  it('never pays twice and never loses the earlier take', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'crash',
      `${manifestYaml('crash')}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`,
    );
    onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    const old = { a: sha256File(join(p.outDir, 'a.mp4')), b: sha256File(join(p.outDir, 'b.mp4')) };
    const net = sandboxNetByItem(sandbox, 'crash');
    const sidecarJob = (name: string) =>
      (JSON.parse(readFileSync(join(p.outDir, name), 'utf8')) as { job_id: string }).job_id;

    const kill = async (args: string[], when: () => boolean, what: string) => {
      const run = spawnCli(['run', p.manifest, '--poll-interval', '0.1', ...args], {
        cwd: p.dir,
        env: cliEnv(sandbox),
      });
      await waitUntil(when, 15_000, what);
      run.child.kill('SIGKILL');
      expect((await run.done).signal).toBe('SIGKILL');
    };

    // 1. Both redo POSTs sent, not answered yet (the service is slow): their keys are in the ledger.
    sandbox.update({ faults: { latency_ms: { min: 800, max: 800 } } });
    await kill(['--redo', 'a', 'b'], () => allPosts(sandbox).length === 4, 'the two redo POSTs');
    await waitUntil(() => sandbox.records().jobs.length === 4, 10_000, 'the jobs to be stored');
    sandbox.update({ faults: { latency_ms: { min: 0, max: 0 } } });
    const prepared = ledgerRows<{ item_id: string; take: number; state: string }>(
      p,
      'SELECT item_id, take, state FROM attempts WHERE seq = 2 ORDER BY item_id',
    );
    expect(prepared).toEqual([
      { item_id: 'a', take: 2, state: 'prepared' },
      { item_id: 'b', take: 2, state: 'prepared' },
    ]);

    // 2. A plain re-run resends the same keys; killed once the earlier take of a is being kept.
    sandbox.update({ faults: { download_bytes_per_second: 4000 } });
    await kill([], () => existsSync(join(p.outDir, 'a.take1.mp4')), 'a.take1.mp4');
    sandbox.update({ faults: { download_bytes_per_second: undefined } });

    // 3. A plain re-run finishes.
    const last = await runAgainst(sandbox, p);
    expect(last.code, last.stderr).toBe(0);
    for (const id of ['a', 'b'] as const) {
      const jobs = jobsOfItem(sandbox, 'crash', id);
      expect(jobs.map((job) => job.status)).toEqual(['succeeded', 'succeeded']);
      expect(sandboxNetByItem(sandbox, 'crash').get(id)).toBe(net.get(id)! + jobs[1]!.amountMicros);
      expect(sha256File(join(p.outDir, `${id}.take1.mp4`))).toBe(old[id]);
      expect(sha256File(join(p.outDir, `${id}.mp4`))).toBe(jobs[1]!.files[0]!.sha256);
      expect(sidecarJob(`${id}.take1.json`)).toBe(jobs[0]!.id);
      expect(sidecarJob(`${id}.json`)).toBe(jobs[1]!.id);
    }
    expect(allPosts(sandbox).filter((post) => post.status === 409)).toEqual([]);
    expect(filesBelow(p.outDir)).toEqual([
      'a.json',
      'a.mp4',
      'a.take1.json',
      'a.take1.mp4',
      'b.json',
      'b.mp4',
      'b.take1.json',
      'b.take1.mp4',
    ]);
  });
});
