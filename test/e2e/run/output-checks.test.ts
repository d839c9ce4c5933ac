import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  expectRerunSendsNothing,
  itemsById,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';

/**
 * Every saved take is checked against its request (docs/checks.md): the sandbox's clip faults make
 * takes that are short, of the wrong size, or cut inside their frames; each is kept on disk, paid
 * for, its check in the ledger, and its item ends `checks_failed`, which a plain re-run leaves be.
 */

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

interface CheckRow {
  item_id: string;
  outcome: string;
  reason: string | null;
  video: string | null;
}

const checkRows = (p: ReturnType<typeof project>) =>
  ledgerRows<CheckRow>(
    p,
    `SELECT a.item_id, t.outcome, t.reason, t.video FROM take_checks t JOIN attempts a ON a.id = t.attempt_id
      ORDER BY a.item_id`,
  );

describe('mediabatch run: every saved take is checked against its request', () => {
  it('passes a good take; fails a short one, a wrong size naming both sizes, and a truncated file as not a video', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'checked',
      `${manifestYaml('checked')}items:
  - {id: good, prompt: "a good clip", input: {orientation: "16:9"}}
  - {id: short, prompt: "a short clip [[short-clip]]", input: {orientation: "16:9"}}
  - {id: small, prompt: "a small clip [[wrong-size]]", input: {orientation: "16:9"}}
  - {id: cut, prompt: "a cut clip [[truncated]]", input: {orientation: "16:9"}}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code, run.stderr).toBe(1);
    const items = itemsById(run.stdout);
    expect(items.get('good')).toMatchObject({ state: 'done', error: null });
    expect(items.get('short')).toMatchObject({
      state: 'checks_failed',
      error: { code: 'checks_failed', message: '1 s long, 2 s asked for (within 0.5 s)' },
    });
    expect(items.get('small')).toMatchObject({
      state: 'checks_failed',
      error: { code: 'checks_failed', message: '426x240, 854x480 asked for (16:9 at 480p)' },
    });
    expect(items.get('cut')?.state).toBe('checks_failed');
    expect(items.get('cut')?.error?.message).toMatch(
      /^not a playable video: the file ends inside its mdat box/,
    );
    expect(run.stderr).toMatch(/short: take 1 failed its check: 1 s long, 2 s asked for/);

    const rows = checkRows(p);
    expect(rows.map((row) => [row.item_id, row.outcome])).toEqual([
      ['cut', 'failed'],
      ['good', 'passed'],
      ['short', 'failed'],
      ['small', 'failed'],
    ]);
    expect(JSON.parse(rows.find((row) => row.item_id === 'good')!.video!)).toEqual({
      seconds: 2,
      width: 854,
      height: 480,
      frames: 4,
    });
    // status and export show each item's take's check.
    const status = await statusJson(p);
    const checkOf = (id: string) =>
      (status.items.find((item) => item.id === id) as { check?: unknown }).check;
    expect(checkOf('good')).toEqual({ outcome: 'passed', reason: null });
    expect(checkOf('short')).toEqual({ outcome: 'failed', reason: '1 s long, 2 s asked for (within 0.5 s)' });
    const exported = await runCli(['export', p.manifest], { cwd: p.dir });
    expect(exported.code, exported.stderr).toBe(0);
    const records = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; check: unknown });
    expect(records.map((record) => [record.id, (record.check as { outcome: string }).outcome])).toEqual([
      ['good', 'passed'],
      ['short', 'failed'],
      ['small', 'failed'],
      ['cut', 'failed'],
    ]);
    // Each take's sidecar says its check once it is recorded.
    const sidecarOf = (id: string) =>
      JSON.parse(readFileSync(join(p.outDir, `${id}.json`), 'utf8')) as { check?: unknown };
    expect(sidecarOf('good').check).toEqual({ outcome: 'passed', reason: null });
    expect(sidecarOf('short').check).toEqual({
      outcome: 'failed',
      reason: '1 s long, 2 s asked for (within 0.5 s)',
    });
    expect(sidecarOf('cut').check).toMatchObject({
      outcome: 'failed',
      reason: expect.stringMatching(/^not a playable video/),
    });
    // Paid outputs are sacred: every failed take stays where it was saved.
    for (const id of ['good', 'short', 'small', 'cut'])
      expect(existsSync(join(p.outDir, `${id}.mp4`))).toBe(true);
    // A plain re-run buys none of them again, and says the same.
    await expectRerunSendsNothing(sandbox, p, 1);
    expect(allPosts(sandbox)).toHaveLength(4);
  }, 60_000);

  it('checks no field the request leaves out, and takes the length within duration_tolerance_seconds', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'loose',
      `version: 1
name: loose
input: {seconds: 2}
duration_tolerance_seconds: 1
items:
  - {id: short, prompt: "a short clip [[short-clip]]"}
  - {id: small, prompt: "a small clip [[wrong-size]]"}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code, run.stderr).toBe(0);
    expect([...itemsById(run.stdout).values()].map((item) => [item.id, item.state])).toEqual([
      ['short', 'done'],
      ['small', 'done'],
    ]);
    const rows = checkRows(p);
    expect(rows.map((row) => [row.item_id, row.outcome])).toEqual([
      ['short', 'passed'],
      ['small', 'passed'],
    ]);
    // The sandbox's default, 720p at 16:9, at half its size: not asked for, so not checked.
    expect(JSON.parse(rows[1]!.video!)).toMatchObject({ width: 640, height: 360, seconds: 2 });
    expect(JSON.parse(rows[0]!.video!)).toMatchObject({ seconds: 1 });
  }, 60_000);

  it('reads no take as a video with video_checks: false: a short clip is done, with no check recorded', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'unread',
      `${manifestYaml('unread', 'video_checks: false\n')}items:
  - {id: short, prompt: "a short clip [[short-clip]]"}
`,
    );
    const run = await runAgainst(sandbox, p, ['--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(itemsById(run.stdout).get('short')).toMatchObject({ state: 'done', error: null });
    expect(checkRows(p)).toEqual([]);
    expect(JSON.parse(readFileSync(join(p.outDir, 'short.json'), 'utf8'))).not.toHaveProperty('check');
    // Nothing is left unchecked by surprise: no check was asked for.
    expect(run.stderr).not.toMatch(/unchecked/);
  }, 60_000);
});
