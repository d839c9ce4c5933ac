import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  allPosts,
  attemptRows,
  type E2eProject,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';
import { type Receiver, startReceiver } from '../../support/receiver.js';
import {
  expectAllDoneOnce,
  expectNoStackTrace,
  itemsYaml,
  itWithMount,
  until,
  writeErrorCode,
} from './support.js';

/**
 * A disk that cannot take the files, made real with a tmpfs on the output folder (as root here,
 * chmod stops nothing): before the run it is refused with exit 2, nothing submitted; mid-run the
 * first failed save stops submissions while the jobs in flight are still watched. A disk too small
 * for the next wave is size-guess.test.ts: only a learnt size refuses, a guessed one never blocks.
 */
let sandbox: SandboxHandle | undefined;
let receiver: Receiver | undefined;
const mounts: string[] = [];
afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = undefined;
  receiver = undefined;
});
// Before tempDir's own afterAll removes the folders (hooks run last-registered first).
afterAll(() => {
  for (const dir of mounts.splice(0).reverse()) execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
});

const itMounts = itWithMount();

function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  mounts.push(dir);
}

const remount = (dir: string, mode: 'ro' | 'rw') => execFileSync('mount', ['-o', `remount,${mode}`, dir]);

interface NdjsonLine {
  event: string;
  at: string;
  level?: string;
  message?: string;
}

const ndjson = (stderr: string): NdjsonLine[] =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as NdjsonLine);

describe('a disk that cannot take the files, before the run', () => {
  itMounts(
    'refuses a read-only output folder: exit 2, nothing sent, no notification; runs once writable',
    async () => {
      const s = await startTestSandbox();
      sandbox = s;
      const r = await startReceiver();
      receiver = r;
      const name = 'ro-before';
      const p = project(name, `${manifestYaml(name)}${itemsYaml(['a', 'b'])}`);
      // Room for two outputs of the 16 MiB guessed before any is saved, once writable again.
      mountTmpfs(p.outDir, '64m');
      remount(p.outDir, 'ro');
      const first = await runAgainst(s, p, ['--notify', r.url]);
      expectNoStackTrace(first);
      expect(first.code).toBe(2);
      expect(first.stderr).toContain(
        `the output folder ${p.outDir} cannot take files: could not write a file (`,
      );
      expect(first.stderr).toContain(
        `nothing was submitted. ${p.outDir} is on a read-only file system: remount it read-write`,
      );
      expect(s.records().requests).toEqual([]);
      expect(r.received).toEqual([]);

      remount(p.outDir, 'rw');
      expectAllDoneOnce(s, p, name, await runAgainst(s, p, ['--json']), ['a', 'b']);
    },
    60_000,
  );
});

describe('a disk that stops taking the files mid-run', () => {
  /**
   * Six one-second jobs, two at a time, saved to a tmpfs that `spoil` breaks as soon as the first
   * job is submitted; then `repair` and a re-run.
   */
  async function brokenMidRun(
    name: string,
    spoil: (p: E2eProject) => void,
    repair: (p: E2eProject) => void,
    code: string,
  ): Promise<void> {
    const s = await startTestSandbox({ running_seconds: { min: 1, max: 1 } });
    sandbox = s;
    const r = await startReceiver();
    receiver = r;
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const p = project(name, `${manifestYaml(name, 'concurrency: 2\n')}${itemsYaml(ids)}`);
    // Room for the re-run's six outputs of 16 MiB guessed (none saved yet to learn from).
    mountTmpfs(p.outDir, '128m');
    const running = runAgainst(s, p, ['--json', '--progress', 'ndjson', '--notify', r.url], {
      MEDIABATCH_NOTIFY_SECRET: 'night-secret',
    });
    await until(() => allPosts(s).length >= 1, 'the first submission', 20_000, running);
    spoil(p);
    const first = await running;
    expectNoStackTrace(first);
    expect(first.code, first.stderr).toBe(3);

    // The stop came with the first failed save, and said what to fix.
    const stop = ndjson(first.stderr).find((line) =>
      line.message?.startsWith(`stopping: cannot save files (${code})`),
    );
    expect(stop, first.stderr).toBeDefined();
    expect(stop!.message).toMatch(/re-run once it is fixed to save them \(nothing is paid again\)/);
    // No submission after it (a POST already on its way may land a moment later).
    const stopAt = Date.parse(stop!.at);
    const posts = allPosts(s);
    expect(posts.filter((post) => post.at > stopAt + 250)).toEqual([]);
    expect(posts.length).toBeLessThan(ids.length);
    // Every job submitted was still watched to its end; no item failed, none saved, all resumable.
    const rows = attemptRows(p);
    expect(rows).toHaveLength(posts.length);
    expect(rows.every((row) => row.job_status === 'succeeded')).toBe(true);
    const report = JSON.parse(first.stdout) as { items: Array<{ id: string; state: string }> };
    const states = new Map(report.items.map((item) => [item.id, item.state]));
    for (const row of rows) expect(states.get(row.item_id)).toBe('in_flight');
    expect([...states.values()].filter((state) => state === 'pending')).toHaveLength(
      ids.length - rows.length,
    );
    expect([...states.values()]).not.toContain('failed');
    // What is at risk now is what the ledger holds: every job paid for, none saved.
    const status = await statusJson(p);
    const at = status as unknown as { value_at_risk: { outputs: number; cost_usd: string } };
    const net = rows.reduce((sum, row) => sum + row.amount_micros - row.refunded_micros, 0);
    expect(at.value_at_risk).toMatchObject({ outputs: rows.length, cost_usd: (net / 1e6).toFixed(6) });
    // The owner was told at the stop and at the end.
    expect(
      r.delivered().map((body) => [body.event, (body.stop as { kind: string; code: string }).code]),
    ).toEqual([
      ['run.stopped', code],
      ['run.finished', code],
    ]);

    repair(p);
    const second = await runAgainst(s, p, ['--json']);
    expectNoStackTrace(second);
    expectAllDoneOnce(s, p, name, second, ids);
  }

  itMounts(
    'a disk that fills (ENOSPC): stops submitting, watches the jobs in flight, exit 3; a re-run saves all',
    async () => {
      await brokenMidRun(
        'disk-fills',
        (p) =>
          expect(writeErrorCode(join(p.outDir, 'filler.bin'), Buffer.alloc(160 * 1024 * 1024))).toBe(
            'ENOSPC',
          ),
        (p) => rmSync(join(p.outDir, 'filler.bin')),
        'ENOSPC',
      );
    },
    90_000,
  );

  itMounts(
    'a disk remounted read-only (EROFS): stops submitting, watches the jobs in flight, exit 3; a re-run saves all',
    async () => {
      await brokenMidRun(
        'disk-ro',
        (p) => remount(p.outDir, 'ro'),
        (p) => remount(p.outDir, 'rw'),
        'EROFS',
      );
    },
    90_000,
  );
});
