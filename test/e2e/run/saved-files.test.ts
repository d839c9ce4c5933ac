import { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  type E2eProject,
  jobsOfItem,
  ledgerRows,
  manifestYaml,
  project,
  requestsTo,
  runAgainst,
  sha256File,
  startTestSandbox,
} from '../../support/e2e.js';

/**
 * Saved outputs are checked, not assumed (docs/results.md, "Saved files on disk"): a file deleted
 * or altered by hand is named by `status` and `plan`, fetched again for free while the service
 * holds it, and after that called what it is (saved, then deleted), paid for again only on request.
 */

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const posts = () => requestsTo(sandbox, 'POST', '/v1/videos').length;

const cli = (p: E2eProject, args: string[]) =>
  runCli([args[0]!, p.manifest, ...args.slice(1)], { cwd: p.dir });

async function json(p: E2eProject, args: string[]) {
  const result = await cli(p, [...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

/** The first saved job of an item, and when the service deletes its outputs, from the ledger. */
function savedJob(p: E2eProject, item: string) {
  return ledgerRows<{ job_id: string; expires_at: string }>(
    p,
    'SELECT job_id, expires_at FROM attempts WHERE item_id = ? AND files_saved = 1 ORDER BY id LIMIT 1',
    item,
  )[0]!;
}

/** Same size, other bytes, and the modification time put back: only a read of the content tells. */
function alterKeepingTime(path: string): void {
  const before = statSync(path);
  const bytes = readFileSync(path);
  bytes.writeUInt8(bytes.readUInt8(bytes.length - 3) ^ 0xff, bytes.length - 3);
  writeFileSync(path, bytes);
  // In seconds with their fraction: a Date holds whole (rounded) ms, which can land a ms away.
  utimesSync(path, before.atimeMs / 1000, before.mtimeMs / 1000);
}

describe('saved files checked on disk', () => {
  it('names a deleted or altered file in status and plan, and run fetches it again for free', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'kept',
      `${manifestYaml('kept')}items:\n  - {id: a, prompt: p a}\n  - {id: b, prompt: p b}\n`,
    );
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    const shaA = sha256File(join(p.outDir, 'a.mp4'));
    const shaB = sha256File(join(p.outDir, 'b.mp4'));
    const jobA = savedJob(p, 'a');
    const clean = await json(p, ['status']);
    expect(clean.totals).toMatchObject({ files_missing: 0, files_altered: 0, files_touched: 0 });
    expect(clean.file_check).toBe('stat');
    expect(clean.items[0].file_problems).toBeUndefined();

    rmSync(join(p.outDir, 'a.mp4'));
    const free = `run fetches it again from job ${jobA.job_id} for free (no new generation, the service keeps it until ${jobA.expires_at})`;
    const status = await cli(p, ['status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(
      'saved files not as saved: 1 (1 missing; checked by size and modification time):\n' +
        `  a: out/kept/a.mp4 missing: no file at this path; ${free}\n`,
    );
    const doc = await json(p, ['status']);
    expect(doc.items[0].state).toBe('done');
    expect(doc.items[0].file_problems).toEqual([
      { path: 'out/kept/a.mp4', problem: 'missing', detail: `no file at this path; ${free}` },
    ]);
    expect(doc.items[1].file_problems).toBeUndefined();
    expect(doc.totals).toMatchObject({ files_missing: 1, files_altered: 0 });

    const plan = await cli(p, ['plan']);
    expect(plan.stdout).toMatch(/^> a +fetch again \(free\) +run fetches it again from job /m);
    expect(plan.stdout).toContain(`  a: out/kept/a.mp4 missing: no file at this path; ${free}`);
    expect(plan.stdout).toContain(
      'Plan: nothing to submit, 1 saved, missing or altered, to fetch again (free), 1 unchanged.',
    );
    const planned = await json(p, ['plan']);
    expect(planned.items[0]).toMatchObject({ id: 'a', plan: 'refetch', estimate_usd: null });
    expect(planned.totals).toMatchObject({ refetch: 1, done: 1, to_submit: 0, files_missing: 1 });

    // b: other bytes, same size and time; only --verify reads them.
    alterKeepingTime(join(p.outDir, 'b.mp4'));
    expect((await json(p, ['status'])).items[1].file_problems).toBeUndefined();
    const verified = await json(p, ['status', '--verify']);
    expect(verified.file_check).toBe('sha256');
    expect(verified.items[1].file_problems).toEqual([
      {
        path: 'out/kept/b.mp4',
        problem: 'altered',
        detail: expect.stringMatching(
          /^same size, but its SHA-256 differs from the one recorded when saved; run fetches it again from job \S+ for free/,
        ),
      },
    ]);
    expect(verified.totals).toMatchObject({ files_missing: 1, files_altered: 1 });
    expect((await json(p, ['plan', '--verify'])).totals).toMatchObject({ refetch: 2, to_submit: 0 });

    const before = posts();
    const again = await runAgainst(sandbox, p);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout + again.stderr).toContain(
      `a: saved file out/kept/a.mp4 is missing; fetching it again from job ${jobA.job_id} (free: no new generation, the service keeps it until ${jobA.expires_at})`,
    );
    expect(again.stdout + again.stderr).toContain(
      'b: saved file out/kept/b.mp4 is altered (not the bytes saved)',
    );
    expect(posts()).toBe(before);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(shaA);
    expect(sha256File(join(p.outDir, 'b.mp4'))).toBe(shaB);
    expect((await json(p, ['status', '--verify'])).totals).toMatchObject({
      files_missing: 0,
      files_altered: 0,
    });
  });

  it('tells a file modified since it was saved by its time, and --verify clears an identical one', async () => {
    sandbox = await startTestSandbox();
    const p = project('touch', `${manifestYaml('touch')}items:\n  - {id: t, prompt: p t}\n`);
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    const path = join(p.outDir, 't.mp4');
    const later = new Date(statSync(path).mtimeMs + 60_000);
    utimesSync(path, later, later);
    const doc = await json(p, ['status']);
    expect(doc.items[0].file_problems).toEqual([
      {
        path: 'out/touch/t.mp4',
        problem: 'touched',
        detail:
          'modified since it was saved (same size, content not read: --verify compares its SHA-256); run compares its SHA-256 and fetches it again if it differs',
      },
    ]);
    expect((await json(p, ['plan'])).items[0].plan).toBe('done');
    expect((await json(p, ['status', '--verify'])).items[0].file_problems).toBeUndefined();
  });

  it('after the retention says saved, then deleted; only --regenerate-expired pays, once', async () => {
    sandbox = await startTestSandbox({ retention_seconds: 2 });
    const p = project('late', `${manifestYaml('late')}items:\n  - {id: a, prompt: p a}\n`);
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    rmSync(join(p.outDir, 'a.mp4'));
    const job = savedJob(p, 'a');
    const wait = Date.parse(job.expires_at) - Date.now() + 200;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));

    const gone =
      /saved on \S+, then deleted from the disk; the service no longer holds it \(its outputs expired on \S+\)/;
    const doc = await json(p, ['status']);
    expect(doc.items[0].state).toBe('done');
    expect(doc.items[0].file_problems[0].detail).toMatch(gone);
    expect(doc.items[0].file_problems[0].detail).toMatch(
      /: only run --regenerate-expired pays for it again$/,
    );
    const plan = await json(p, ['plan']);
    expect(plan.items[0]).toMatchObject({ plan: 'expired', estimate_usd: null });
    expect(plan.items[0].reason).toMatch(gone);
    expect(plan.totals.to_submit).toBe(0);
    const preview = await json(p, ['plan', '--regenerate-expired']);
    expect(preview.items[0]).toMatchObject({
      plan: 'expired',
      estimate_usd: expect.stringMatching(/^0\.\d+$/),
    });
    expect(preview.items[0].reason).toMatch(/: generated and paid for again$/);
    expect(preview.totals.to_submit).toBe(1);
    expect(preview.summary).toContain('1 expired to generate again');

    const before = posts();
    const first = await runAgainst(sandbox, p);
    expect(first.code, first.stderr).toBe(1);
    expect(first.stdout + first.stderr).toContain(
      `a: saved file out/late/a.mp4 is missing; fetching it again from job ${job.job_id} (its outputs expired at the service on ${job.expires_at}`,
    );
    const item = (await json(p, ['status'])).items[0];
    expect(item.state).toBe('expired');
    expect(item.error.message).toMatch(
      /^saved on \S+, then deleted from the disk; the service no longer holds it$/,
    );
    expect(item.error.message).not.toContain('before they were saved');
    expect(posts()).toBe(before);
    const text = await cli(p, ['plan']);
    expect(text.stdout).toMatch(
      /^! a +expired +saved on \S+, then deleted from the disk; the service no longer holds it; run --regenerate-expired pays for it again$/m,
    );
    expect((await runAgainst(sandbox, p)).code).toBe(1);
    expect(posts()).toBe(before);

    sandbox.update({ retention_seconds: 3600 });
    const regenerated = await runAgainst(sandbox, p, ['--regenerate-expired', '--json']);
    expect(regenerated.code, regenerated.stderr).toBe(0);
    expect(posts()).toBe(before + 1);
    const jobs = jobsOfItem(sandbox, 'late', 'a');
    expect(jobs).toHaveLength(2);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(jobs[1]!.files[0]!.sha256);
    const done = await json(p, ['status']);
    expect(done.items[0]).toMatchObject({ state: 'done', job_id: jobs[1]!.id, error: null });
    expect(done.items[0].file_problems).toBeUndefined();
  });
});
