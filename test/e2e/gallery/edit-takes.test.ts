import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, spawnCli } from '../../support/cli.js';
import {
  cliEnv,
  type E2eProject,
  expectRerunSendsNothing,
  filesBelow,
  jobsOfItem,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sandboxNetByItem,
  sha256File,
  startClockedSandbox,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const yaml = (aPrompt: string) =>
  `${manifestYaml('edit', 'budget_usd: "20.00"\n')}items:\n  - {id: a, prompt: ${aPrompt}}\n  - {id: b, prompt: second}\n`;

const sidecar = (p: E2eProject, name: string) =>
  JSON.parse(readFileSync(join(p.outDir, name), 'utf8')) as { take: number; job_id: string; prompt: string };

const fileRows = (p: E2eProject) =>
  ledgerRows<{ item_id: string; take: number; path: string; sha256: string }>(
    p,
    `SELECT a.item_id, a.take, f.path, f.sha256 FROM files f JOIN attempts a ON a.id = f.attempt_id
      ORDER BY a.id`,
  ).map((row) => ({ ...row, path: relative(p.outDir, resolve(p.dir, row.path)) }));

describe('editing an item never replaces what was paid for', () => {
  it('keeps the earlier output as take 1, exactly as --redo does', async () => {
    sandbox = await startTestSandbox();
    const p = project('edit', yaml('first'));
    onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    const old = sha256File(join(p.outDir, 'a.mp4'));
    const bBefore = sha256File(join(p.outDir, 'b.mp4'));

    writeFileSync(p.manifest, yaml('first at night'));
    const plan = await runCli(['plan', p.manifest], { cwd: p.dir });
    expect(plan.stdout).toMatch(/~ a\s+changed/);
    const edited = await runAgainst(sandbox, p);
    expect(edited.code, edited.stderr).toBe(0);

    const jobs = jobsOfItem(sandbox, 'edit', 'a');
    expect(jobs.map((job) => [job.status, job.input.prompt])).toEqual([
      ['succeeded', 'first'],
      ['succeeded', 'first at night'],
    ]);
    expect(sha256File(join(p.outDir, 'a.take1.mp4'))).toBe(old);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(jobs[1]!.files[0]!.sha256);
    expect(sidecar(p, 'a.take1.json')).toMatchObject({ take: 1, job_id: jobs[0]!.id, prompt: 'first' });
    expect(sidecar(p, 'a.json')).toMatchObject({ take: 2, job_id: jobs[1]!.id, prompt: 'first at night' });
    expect(jobsOfItem(sandbox, 'edit', 'b')).toHaveLength(1);
    expect(sha256File(join(p.outDir, 'b.mp4'))).toBe(bBefore);
    expect(fileRows(p)).toEqual([
      { item_id: 'a', take: 1, path: 'a.take1.mp4', sha256: old },
      { item_id: 'b', take: 1, path: 'b.mp4', sha256: bBefore },
      { item_id: 'a', take: 2, path: 'a.mp4', sha256: jobs[1]!.files[0]!.sha256 },
    ]);
    await expectRerunSendsNothing(sandbox, p, 0);
  });

  it('watches a job that was in flight when its item was edited and saves it as take 1', async () => {
    // Both jobs run a minute on the sandbox's clock, which only the test moves on: they are still
    // running when the run is killed, however slow the machine.
    const clocked = await startClockedSandbox({ running_seconds: { min: 60, max: 60 } });
    sandbox = clocked.sandbox;
    const p = project('edit', yaml('first'));
    onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));

    // The first run is killed while both jobs are running: they are paid for, nothing is saved.
    const killed = spawnCli(['run', p.manifest, '--poll-interval', '0.1'], {
      cwd: p.dir,
      env: cliEnv(sandbox),
    });
    await waitUntil(
      () => ledgerRows(p, "SELECT id FROM attempts WHERE state = 'accepted'").length === 2,
      30_000,
      'both jobs accepted',
    );
    killed.child.kill('SIGKILL');
    expect((await killed.done).signal).toBe('SIGKILL');
    expect(filesBelow(p.outDir)).toEqual([]);

    writeFileSync(p.manifest, yaml('first at night'));
    sandbox.update({ running_seconds: { min: 0.1, max: 0.3 } });
    clocked.advance(61);
    const edited = await runAgainst(sandbox, p);
    expect(edited.code, edited.stderr).toBe(0);

    const jobs = jobsOfItem(sandbox, 'edit', 'a');
    expect(jobs.map((job) => [job.status, job.input.prompt])).toEqual([
      ['succeeded', 'first'],
      ['succeeded', 'first at night'],
    ]);
    // Three jobs in all: the old one of a was followed, not sent again, and b was not sent twice.
    expect(sandbox.records().jobs).toHaveLength(3);
    expect(sha256File(join(p.outDir, 'a.take1.mp4'))).toBe(jobs[0]!.files[0]!.sha256);
    expect(sha256File(join(p.outDir, 'a.mp4'))).toBe(jobs[1]!.files[0]!.sha256);
    expect(sidecar(p, 'a.take1.json')).toMatchObject({ take: 1, job_id: jobs[0]!.id });
    expect(sidecar(p, 'a.json')).toMatchObject({ take: 2, job_id: jobs[1]!.id });
    expect(filesBelow(p.outDir)).toEqual([
      'a.json',
      'a.mp4',
      'a.take1.json',
      'a.take1.mp4',
      'b.json',
      'b.mp4',
    ]);
    // What the ledger says was spent is what the sandbox charged, both jobs of a included.
    const spent = ledgerRows<{ item_id: string; net: number }>(
      p,
      'SELECT item_id, SUM(amount_micros - refunded_micros) AS net FROM attempts GROUP BY item_id ORDER BY item_id',
    );
    const net = sandboxNetByItem(sandbox, 'edit');
    expect(spent).toEqual([
      { item_id: 'a', net: net.get('a') },
      { item_id: 'b', net: net.get('b') },
    ]);
    expect(ledgerRows(p, 'SELECT item_id, state FROM items ORDER BY item_id')).toEqual([
      { item_id: 'a', state: 'done' },
      { item_id: 'b', state: 'done' },
    ]);
    await expectRerunSendsNothing(sandbox, p, 0);
  }, 90_000);
});
