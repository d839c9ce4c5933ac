import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type TakeCheck, withOwnChecks } from '../../src/runner/output-check.js';
import {
  CheckCannotRun,
  commandResult,
  type OwnChecks,
  runOwnChecks,
  unrunnableCheck,
} from '../../src/runner/own-checks.js';
import { removeTempDir, tempDir } from '../support/temp.js';

/** The environment a batch gives its checks: here, this process's PATH (settings.ts' hookEnv). */
const ENV = { PATH: process.env.PATH ?? '' };

/** Checks of your own (docs/checks.md): a program's verdict, a function's, and how a take is judged. */

let dir: string | null = null;
afterEach(() => {
  if (dir) removeTempDir(dir);
  dir = null;
});

const passedVideo: TakeCheck = {
  outcome: 'passed',
  reason: null,
  video: { seconds: 2, width: 854, height: 480, frames: 4 },
};

describe('commandResult: what a program said', () => {
  it('passes on exit 0 and fails on anything else, the first line printed as the reason', () => {
    expect(commandResult('c', 0, '', '')).toEqual({
      name: 'c',
      outcome: 'passed',
      score: null,
      reason: null,
    });
    expect(commandResult('c', 1, '\n  too dark  \nmore\n', 'on stderr')).toEqual({
      name: 'c',
      outcome: 'failed',
      score: null,
      reason: 'too dark',
    });
    expect(commandResult('c', 2, '', 'only stderr\n').reason).toBe('only stderr');
    expect(commandResult('c', 7, '', '').reason).toBe('it exited with 7');
  });

  it('reads a JSON line for a score and its words; pass false fails even on exit 0', () => {
    const line = JSON.stringify({ pass: true, score: 0.75, reason: 'sharp enough' });
    expect(commandResult('c', 0, `checking...\n${line}\n`, '')).toEqual({
      name: 'c',
      outcome: 'passed',
      score: 0.75,
      reason: 'sharp enough',
    });
    expect(commandResult('c', 0, '{"pass": false, "score": 0.1}', '')).toMatchObject({
      outcome: 'failed',
      score: 0.1,
      reason: 'it exited with 0',
    });
    expect(commandResult('c', 3, 'blurry\n{"score": 0.2}', '')).toMatchObject({
      outcome: 'failed',
      score: 0.2,
      reason: 'blurry',
    });
    // A line that only looks like JSON is a reason like any other.
    expect(commandResult('c', 1, '{not json', '').reason).toBe('{not json');
    expect(commandResult('c', 1, '{"other": 1}', '').reason).toBe('{"other": 1}');
    expect(commandResult('c', 0, '{"score": "high"}', '').score).toBeNull();
  });
});

describe('withOwnChecks: the take as the built-in and own checks judge it', () => {
  it('keeps the built-in verdict when no own check ran, or when the built-in check failed', () => {
    expect(withOwnChecks(passedVideo, [])).toBe(passedVideo);
    const failed: TakeCheck = { outcome: 'failed', reason: '1 s long', video: null };
    expect(withOwnChecks(failed, [{ name: 'a', outcome: 'failed', score: 0, reason: 'x' }])).toBe(failed);
  });

  it('fails with the first failed check named, and keeps the lowest score', () => {
    const judged = withOwnChecks(passedVideo, [
      { name: 'a', outcome: 'passed', score: 0.9, reason: null },
      { name: 'b', outcome: 'failed', score: 0.3, reason: 'too dark' },
      { name: 'c', outcome: 'failed', score: null, reason: null },
    ]);
    expect(judged).toMatchObject({
      outcome: 'failed',
      reason: 'b: too dark',
      score: 0.3,
      video: passedVideo.video,
    });
    expect(judged.own).toHaveLength(3);
  });

  it('passes a take its container did not tell of when its own checks pass', () => {
    const unread: TakeCheck = { outcome: 'unchecked', reason: 'not MP4', video: null };
    expect(
      withOwnChecks(unread, [{ name: 'a', outcome: 'passed', score: null, reason: null }]),
    ).toMatchObject({
      outcome: 'passed',
      reason: null,
      score: null,
    });
  });
});

describe('runOwnChecks: programs and functions on every file of a take', () => {
  const take = { itemId: 'beach', take: 2 };

  it('gives a program {file}, {sidecar} and the sidecar on stdin, in the manifest folder', async () => {
    dir = tempDir();
    const file = join(dir, 'beach.mp4');
    writeFileSync(file, 'video');
    writeFileSync(join(dir, 'beach.json'), JSON.stringify({ prompt: 'a beach' }));
    const script = [
      "const fs = require('node:fs');",
      "const side = JSON.parse(fs.readFileSync(0, 'utf8'));",
      'const [file, sidecar] = process.argv.slice(1);',
      "const ok = fs.readFileSync(file, 'utf8') === 'video' && sidecar.endsWith('beach.json') && side.prompt === 'a beach';",
      "console.log(JSON.stringify({ pass: ok, score: fs.existsSync('beside.txt') ? 1 : 0 }));",
    ].join('\n');
    writeFileSync(join(dir, 'beside.txt'), '');
    const own: OwnChecks = {
      checks: [
        { name: 'look', run: [process.execPath, '-e', script, '{file}', '{sidecar}'], timeoutMs: 10_000 },
      ],
      cwd: dir,
      env: ENV,
    };
    expect(await runOwnChecks(own, take, [{ path: file }])).toEqual([
      { name: 'look', outcome: 'passed', score: 1, reason: null },
    ]);
  });

  it('combines a check over several files: failed if one fails, the lowest score', async () => {
    const seen: unknown[] = [];
    const own: OwnChecks = {
      checks: [
        {
          name: 'fn',
          check: (file) => {
            seen.push([file.itemId, file.take, file.file, file.sidecar, file.provenance]);
            return file.file.endsWith('b.mp4')
              ? { pass: false, score: 0.2, reason: 'b is bad' }
              : { pass: true, score: 0.8 };
          },
        },
      ],
      cwd: '/',
      env: ENV,
    };
    const results = await runOwnChecks(own, take, [{ path: '/nowhere/a.mp4' }, { path: '/nowhere/b.mp4' }]);
    expect(results).toEqual([{ name: 'fn', outcome: 'failed', score: 0.2, reason: 'b is bad' }]);
    expect(seen[0]).toEqual(['beach', 2, '/nowhere/a.mp4', null, null]);
    const bools: OwnChecks = { checks: [{ name: 'yes', check: () => false }], cwd: '/', env: ENV };
    expect(await runOwnChecks(bools, take, [{ path: '/x.mp4' }])).toEqual([
      { name: 'yes', outcome: 'failed', score: null, reason: 'it failed' },
    ]);
  });

  it('throws CheckCannotRun for a missing program, a timeout and a function that throws', async () => {
    const missing: OwnChecks = {
      checks: [{ name: 'gone', run: ['no-such-program-x'], timeoutMs: 5000 }],
      cwd: '/',
      env: ENV,
    };
    await expect(runOwnChecks(missing, take, [{ path: '/x.mp4' }])).rejects.toThrow(
      'the check gone could not run: its program no-such-program-x was not found',
    );
    const slow: OwnChecks = {
      checks: [
        { name: 'slow', run: [process.execPath, '-e', 'setTimeout(() => {}, 30000)'], timeoutMs: 200 },
      ],
      cwd: '/',
      env: ENV,
    };
    await expect(runOwnChecks(slow, take, [{ path: '/x.mp4' }])).rejects.toThrow(
      'the check slow could not run: it did not finish within 0.2 s (timeout_seconds)',
    );
    const throws: OwnChecks = {
      checks: [
        {
          name: 'fn',
          check: () => {
            throw new Error('no model loaded');
          },
        },
      ],
      cwd: '/',
      env: ENV,
    };
    const error = await runOwnChecks(throws, take, [{ path: '/x.mp4' }]).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CheckCannotRun);
    expect((error as CheckCannotRun).check).toBe('fn');
  });

  it('finds a program that is not there before anything is sent: on PATH, or beside the manifest', async () => {
    dir = tempDir();
    writeFileSync(join(dir, 'plain.sh'), '#!/bin/sh\n', { mode: 0o644 });
    writeFileSync(join(dir, 'ok.sh'), '#!/bin/sh\n', { mode: 0o755 });
    const checks = (run: string[]): OwnChecks => ({
      checks: [{ name: 'c', run, timeoutMs: 1000 }],
      cwd: dir!,
      env: ENV,
    });
    expect(await unrunnableCheck(checks(['node']))).toBeNull();
    expect(await unrunnableCheck(checks(['./ok.sh']))).toBeNull();
    expect((await unrunnableCheck(checks(['no-such-program-x'])))?.message).toBe(
      'the check c could not run: its program no-such-program-x was not found on PATH',
    );
    expect((await unrunnableCheck(checks(['./gone.sh'])))?.why).toBe('its program ./gone.sh was not found');
    expect((await unrunnableCheck(checks(['./plain.sh'])))?.why).toBe(
      'its program ./plain.sh may not be run (not executable)',
    );
    expect(
      await unrunnableCheck({ checks: [{ name: 'f', check: () => true }], cwd: dir, env: ENV }),
    ).toBeNull();
  });
});
