import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  expectRerunSendsNothing,
  jobsOfItem,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

/**
 * Checks of your own (docs/checks.md): a program run on each saved take, its verdict and score
 * recorded, a failure re-rolled as the built-in checks' are; a check that cannot run stops the run
 * before the next take is bought; `mediabatch check` checks saved takes again without a POST.
 */

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

/** Passes unless the sidecar's prompt says "blurry"; prints a JSON verdict with a score. */
const SCORE_JS = `
const fs = require('node:fs');
const side = JSON.parse(fs.readFileSync(0, 'utf8'));
const bytes = fs.statSync(process.argv[2]).size;
const blurry = side.prompt.includes('blurry');
console.log(JSON.stringify({ pass: !blurry, score: blurry ? 0.2 : 0.9, reason: blurry ? 'too blurry' : 'sharp, ' + bytes + ' bytes' }));
process.exit(blurry ? 3 : 0);
`;

const checksYaml = (run: string, extra = '') => `checks:\n  - name: sharp\n    run: ${run}\n${extra}`;

const checkRows = (p: ReturnType<typeof project>, itemId: string) =>
  ledgerRows<{ take: number; outcome: string; reason: string | null; score: number | null }>(
    p,
    `SELECT a.take, t.outcome, t.reason, t.score FROM take_checks t JOIN attempts a ON a.id = t.attempt_id
      WHERE a.item_id = ? ORDER BY a.id`,
    itemId,
  );

describe('mediabatch run: checks of your own', () => {
  it('records a passing check with its score, and re-rolls a take the check fails', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'own',
      `${manifestYaml('own', `rerolls: 1\n${checksYaml('[node, score.js, "{file}"]')}`)}items:
  - {id: sharp, prompt: "a sharp beach"}
  - {id: fog, prompt: "a blurry fog"}
`,
      { 'score.js': SCORE_JS },
    );
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1);
    expect(checkRows(p, 'sharp')).toEqual([{ take: 1, outcome: 'passed', reason: null, score: 0.9 }]);
    expect(checkRows(p, 'fog')).toEqual([
      { take: 1, outcome: 'failed', reason: 'sharp: too blurry', score: 0.2 },
      { take: 2, outcome: 'failed', reason: 'sharp: too blurry', score: 0.2 },
    ]);
    expect(run.stdout + run.stderr).toMatch(
      /fog: take 1 failed its check: sharp: too blurry; .*re-roll 1 of 1/,
    );
    expect(jobsOfItem(sandbox, 'own', 'fog')).toHaveLength(2);
    expect((await statusJson(p)).items.find((item) => item.id === 'fog')).toMatchObject({
      state: 'checks_failed',
      error: { code: 'checks_failed', message: 'sharp: too blurry' },
      check: { outcome: 'failed', reason: 'sharp: too blurry', score: 0.2 },
    });
    // The score beside outcome and reason in export, and in each take's sidecar.
    const exported = await runCli(['export', p.manifest], { cwd: p.dir });
    const records = exported.stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { id: string; check: unknown; earlier_takes: Array<{ check: unknown }> },
      );
    expect(records.find((record) => record.id === 'sharp')?.check).toEqual({
      outcome: 'passed',
      reason: null,
      score: 0.9,
    });
    expect(records.find((record) => record.id === 'fog')?.earlier_takes[0]?.check).toEqual({
      outcome: 'failed',
      reason: 'sharp: too blurry',
      score: 0.2,
    });
    expect(JSON.parse(readFileSync(join(p.outDir, 'fog.take1.json'), 'utf8')).check).toEqual({
      outcome: 'failed',
      reason: 'sharp: too blurry',
      score: 0.2,
    });
    await expectRerunSendsNothing(sandbox, p, 1);
  }, 60_000);

  it('stops before anything is bought when the check program is missing', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'missing',
      `${manifestYaml('missing', checksYaml('[no-such-checker-x, "{file}"]'))}items:
  - {id: a, prompt: "one"}
  - {id: b, prompt: "two"}
`,
    );
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout + run.stderr).toContain(
      'the check sharp could not run: its program no-such-checker-x was not found on PATH',
    );
    expect(allPosts(sandbox)).toHaveLength(0);
    expect(sandbox.records().jobs).toHaveLength(0);
    expect((await statusJson(p)).totals.spent_usd).toBe('0.000000');
  }, 60_000);

  it('stops at a check that times out before the next take is bought; the take saved is unchecked', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'slow',
      `${manifestYaml(
        'slow',
        `concurrency: 1\n${checksYaml('[node, -e, "setTimeout(() => {}, 60000)"]', '    timeout_seconds: 0.5\n')}`,
      )}items:
  - {id: a, prompt: "one"}
  - {id: b, prompt: "two"}
  - {id: c, prompt: "three"}
`,
    );
    const run = await runAgainst(sandbox, p);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout + run.stderr).toContain(
      'the check sharp could not run: it did not finish within 0.5 s',
    );
    // One take bought and saved, none after it.
    expect(allPosts(sandbox)).toHaveLength(1);
    expect(sandbox.records().jobs).toHaveLength(1);
    expect(checkRows(p, 'a')).toEqual([
      {
        take: 1,
        outcome: 'unchecked',
        reason: 'the check sharp could not run: it did not finish within 0.5 s (timeout_seconds)',
        score: null,
      },
    ]);
  }, 60_000);
});

describe('mediabatch check: saved takes checked again', () => {
  it('marks a take failed after a check is added, without any POST; the next run re-rolls it', async () => {
    sandbox = await startTestSandbox();
    const items = `items:
  - {id: sharp, prompt: "a sharp beach"}
  - {id: fog, prompt: "a blurry fog"}
`;
    const p = project('later', `${manifestYaml('later', 'rerolls: 1\n')}${items}`, { 'score.js': SCORE_JS });
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    const posts = allPosts(sandbox).length;
    const requests = sandbox.records().requests.length;
    writeFileSync(
      p.manifest,
      `${manifestYaml('later', `rerolls: 1\n${checksYaml('[node, score.js, "{file}"]')}`)}${items}`,
    );
    const sidecar = (id: string) => join(p.outDir, `${id}.json`);
    expect(JSON.parse(readFileSync(sidecar('fog'), 'utf8')).check).toEqual({
      outcome: 'passed',
      reason: null,
    });
    const check = await runCli(['check', p.manifest, '--json'], { cwd: p.dir });
    expect(check.code, check.stderr).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({
      totals: { checked: 2, passed: 1, failed: 1, unchecked: 0 },
      takes: [
        { itemId: 'sharp', take: 1, outcome: 'passed', before: 'passed', score: 0.9, state: 'done' },
        {
          itemId: 'fog',
          take: 1,
          outcome: 'failed',
          before: 'passed',
          reason: 'sharp: too blurry',
          state: 'checks_failed',
        },
      ],
      stopped: null,
    });
    // Nothing was asked of the service at all.
    expect(sandbox.records().requests).toHaveLength(requests);
    expect((await statusJson(p)).items.find((item) => item.id === 'fog')).toMatchObject({
      state: 'checks_failed',
    });
    // Each sidecar says what the check found now; checked alike again, neither is rewritten.
    expect(JSON.parse(readFileSync(sidecar('fog'), 'utf8')).check).toEqual({
      outcome: 'failed',
      reason: 'sharp: too blurry',
      score: 0.2,
    });
    const before = ['sharp', 'fog'].map((id) => [
      readFileSync(sidecar(id), 'utf8'),
      statSync(sidecar(id)).ino,
    ]);
    const text = await runCli(['check', p.manifest], { cwd: p.dir });
    expect(text.stdout).toContain('fog take 1: failed score 0.2: sharp: too blurry');
    expect(
      ['sharp', 'fog'].map((id) => [readFileSync(sidecar(id), 'utf8'), statSync(sidecar(id)).ino]),
    ).toEqual(before);
    // plan says so: fog is bought again (the re-roll the run owes), sharp is done.
    const plan = await runCli(['plan', p.manifest, '--json'], { cwd: p.dir });
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout) as {
      totals: { to_submit: number };
      items: Array<{ id: string; plan: string; reason?: string }>;
    };
    expect(planned.totals.to_submit).toBe(1);
    expect(planned.items).toEqual([
      expect.objectContaining({ id: 'sharp', plan: 'done' }),
      expect.objectContaining({
        id: 'fog',
        plan: 'retry',
        reason: 'its take failed its check: sharp: too blurry; bought again as a new take (re-roll 1 of 1)',
      }),
    ]);
    // The next run buys fog again (its one re-roll), keeping take 1, and nothing for sharp.
    const rerun = await runAgainst(sandbox, p);
    expect(rerun.code, rerun.stderr).toBe(1);
    expect(allPosts(sandbox)).toHaveLength(posts + 1);
    expect(jobsOfItem(sandbox, 'later', 'fog')).toHaveLength(2);
    expect(checkRows(p, 'fog').map((row) => [row.take, row.outcome])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
    ]);
    // Its re-roll spent, plan says it is left for a person, and a plain run buys nothing more.
    const spent = JSON.parse((await runCli(['plan', p.manifest, '--json'], { cwd: p.dir })).stdout);
    expect(spent.items.find((item: { id: string }) => item.id === 'fog')).toMatchObject({ plan: 'failed' });
    await expectRerunSendsNothing(sandbox, p, 1);
    expect(existsSync(join(p.outDir, 'fog.take1.mp4'))).toBe(true);
  }, 90_000);
});
