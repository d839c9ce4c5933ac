import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { type CliResult, spawnCli } from '../../support/cli.js';
import {
  allPosts,
  attemptRows,
  cliEnv,
  type E2eProject,
  manifestYaml,
  project,
  runAgainst,
  startClockedSandbox,
  startTestSandbox,
} from '../../support/e2e.js';
import {
  canMount,
  expectAllDoneOnce,
  expectNoStackTrace,
  filesUnder,
  itemsYaml,
  sha256,
  until,
} from './support.js';

let sandbox: SandboxHandle | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  await sandbox?.close();
  sandbox = undefined;
});

const LOCK_HOLDER = resolve(import.meta.dirname, '../../ledger/lock-holder.mjs');

/** A first run that saves nothing because of `obstacle`, then a re-run once it is removed. */
async function blockedThenRecovered(
  name: string,
  ids: string[],
  obstacle: (p: E2eProject) => () => void,
  expectMessage: RegExp,
  json = false,
): Promise<CliResult> {
  const s = await startTestSandbox();
  sandbox = s;
  const p = project(name, `${manifestYaml(name)}${itemsYaml(ids)}`);
  const removeOnce = obstacle(p);
  let removed = false;
  const remove = () => {
    if (!removed) removeOnce();
    removed = true;
  };
  cleanups.push(remove);

  const first = await runAgainst(s, p, json ? ['--json'] : []);
  expectNoStackTrace(first);
  expect(first.code, first.stdout + first.stderr).toBe(1);
  // Plain mode logs on stdout; --json keeps stdout for its document and says it on stderr.
  const said = json ? first.stderr : first.stdout;
  expect(said).toMatch(expectMessage);
  expect(said).toMatch(/re-run/);
  // The ledger still knows every job succeeded and was paid once; nothing is lost.
  const rows = attemptRows(p);
  expect(rows.map((row) => [row.item_id, row.job_status])).toEqual(ids.map((id) => [id, 'succeeded']));
  const posts = allPosts(s).length;
  expect(posts).toBe(ids.length);

  remove();
  const second = await runAgainst(s, p, ['--json']);
  expectNoStackTrace(second);
  expectAllDoneOnce(s, p, name, second, ids);
  expect(allPosts(s)).toHaveLength(posts);
  return first;
}

/** The states `run --json` reported for its items. */
const jsonStates = (result: CliResult) =>
  (JSON.parse(result.stdout) as { items: Array<{ state: string }> }).items.map((item) => item.state);

describe('local faults while saving outputs', () => {
  it('refuses an output folder that cannot be made before submitting (exit 2), and runs once it can', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const name = 'blocked-dir';
    const p = project(name, `${manifestYaml(name)}${itemsYaml(['a', 'b'])}`);
    // chmod does not stop root: a regular file where the folder should be stops everyone.
    mkdirSync(join(p.outDir, '..'), { recursive: true });
    writeFileSync(p.outDir, 'not a folder');
    const first = await runAgainst(s, p);
    expectNoStackTrace(first);
    expect(first.code).toBe(2);
    expect(first.stderr).toMatch(
      /the output folder .* cannot take files: could not create the folder \(.*(EEXIST|ENOTDIR).*\); nothing was submitted/,
    );
    expect(s.records().requests).toEqual([]);
    rmSync(p.outDir);
    expectAllDoneOnce(s, p, name, await runAgainst(s, p, ['--json']), ['a', 'b']);
  }, 60_000);

  it('reports a folder standing where an output file must go, and recovers once it is gone', async () => {
    const first = await blockedThenRecovered(
      'blocked-file',
      ['a', 'b'],
      (p) => {
        mkdirSync(join(p.outDir, 'a.mp4', 'inside'), { recursive: true });
        return () => rmSync(join(p.outDir, 'a.mp4'), { recursive: true, force: true });
      },
      /a: files not saved: .*(EISDIR|ENOTEMPTY|EEXIST|directory)/i,
      true,
    );
    expect(jsonStates(first)).toContain('in_flight');
  }, 60_000);
});

describe('local faults of the ledger', () => {
  async function unusableLedger(name: string, spoil: (p: E2eProject) => () => void, reason: RegExp) {
    const s = await startTestSandbox();
    sandbox = s;
    const p = project(name, `${manifestYaml(name)}${itemsYaml(['a'])}`);
    const restore = spoil(p);
    const first = await runAgainst(s, p);
    expectNoStackTrace(first);
    expect(first.code).toBe(2);
    expect(first.stderr).toContain(`the ledger ${p.ledger}`);
    expect(first.stderr).toMatch(reason);
    expect(s.records().requests).toEqual([]);
    restore();
    expectAllDoneOnce(s, p, name, await runAgainst(s, p, ['--json']), ['a']);
  }

  it('names the ledger when its folder is a file (read-only ledger for root), submits nothing, recovers', async () => {
    await unusableLedger(
      'ledger-folder-file',
      (p) => {
        writeFileSync(join(p.dir, '.mediabatch'), 'in the way');
        return () => rmSync(join(p.dir, '.mediabatch'));
      },
      /EEXIST|ENOTDIR|not a directory|already exists/i,
    );
  });

  it('names the ledger when it is not a database, submits nothing, recovers once moved away', async () => {
    await unusableLedger(
      'ledger-garbage',
      (p) => {
        mkdirSync(join(p.dir, '.mediabatch'));
        writeFileSync(p.ledger, 'this is not sqlite\n'.repeat(100));
        return () => rmSync(p.ledger);
      },
      /not a database/,
    );
  });

  it('names the ledger when it is a folder, submits nothing, recovers', async () => {
    await unusableLedger(
      'ledger-is-dir',
      (p) => {
        mkdirSync(p.ledger, { recursive: true });
        return () => rmSync(p.ledger, { recursive: true });
      },
      /EISDIR|directory/i,
    );
  });

  it.skipIf(!canMount())(
    'stops with a clear error when the ledger disk fills mid-run; a re-run pays nothing twice',
    async () => {
      // The jobs end only when the test moves the sandbox's clock on: the disk fills while the run
      // still has jobs to record and items to submit, however slow the machine.
      const clocked = await startClockedSandbox({ running_seconds: { min: 60, max: 60 } });
      const s = clocked.sandbox;
      sandbox = s;
      const name = 'ledger-full';
      const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
      const p = project(name, `${manifestYaml(name)}${itemsYaml(ids)}`);
      const folder = join(p.dir, '.mediabatch');
      mkdirSync(folder);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', folder]);
      cleanups.push(() => execFileSync('umount', ['-l', folder]));
      const running = runAgainst(s, p);
      await until(() => s.records().jobs.length >= 2, 'the first jobs', 20_000, running);
      const filler = join(folder, 'filler.bin');
      expect(() => writeFileSync(filler, Buffer.alloc(16 * 1024 * 1024))).toThrow(/ENOSPC/);
      s.update({ running_seconds: { min: 1, max: 1 } });
      clocked.advance(61);

      const stopped = await running;
      expectNoStackTrace(stopped);
      expect(stopped.code, stopped.stderr + stopped.stdout).toBe(1);
      expect(stopped.stderr).toContain(`cannot write the ledger ${p.ledger}: database or disk is full`);
      expect(stopped.stderr).toMatch(/re-run/);

      rmSync(filler);
      expectAllDoneOnce(s, p, name, await runAgainst(s, p, ['--json']), ids);
    },
    60_000,
  );

  it('refuses a ledger held by another live run: exit 3, nothing sent or changed, then recovers', async () => {
    // The live run's jobs end only when the test moves the sandbox's clock on: it still holds the
    // ledger when the second run starts, however long that run takes to start.
    const clocked = await startClockedSandbox({ running_seconds: { min: 60, max: 60 } });
    const s = clocked.sandbox;
    sandbox = s;
    const name = 'held';
    const p = project(name, `${manifestYaml(name)}${itemsYaml(['a', 'b'], (id) => `slow ${id}`)}`);
    const live = spawnCli(['run', p.manifest, '--poll-interval', '0.1', '--json'], {
      cwd: p.dir,
      env: cliEnv(s),
    });
    await until(() => s.records().jobs.length === 2, 'the live run to submit', 20_000, live.done);
    const before = { requests: s.records().requests.length, posts: allPosts(s).length };

    const second: CliResult = await runAgainst(s, p);
    expectNoStackTrace(second);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain(`the ledger ${p.ledger} is held by another live run`);
    expect(second.stdout).toBe('');
    expect(allPosts(s)).toHaveLength(before.posts);

    clocked.advance(61);
    const firstResult = await live.done;
    expectAllDoneOnce(s, p, name, firstResult, ['a', 'b']);
    const again = await runAgainst(s, p, ['--json']);
    expectAllDoneOnce(s, p, name, again, ['a', 'b']);
    expect(allPosts(s)).toHaveLength(2);
  }, 60_000);

  it('leaves a held ledger byte-for-byte unchanged and sends nothing, then resumes when released', async () => {
    const s = await startTestSandbox();
    sandbox = s;
    const name = 'locked';
    const p = project(name, `${manifestYaml(name)}${itemsYaml(['a'])}`);
    expectAllDoneOnce(s, p, name, await runAgainst(s, p, ['--json']), ['a']);
    writeFileSync(p.manifest, `${manifestYaml(name)}${itemsYaml(['a', 'b'])}`);

    const holder = spawn(process.execPath, ['--import', 'tsx', LOCK_HOLDER, p.ledger], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanups.push(() => holder.kill('SIGKILL'));
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    const snapshot = () =>
      filesUnder(join(p.dir, '.mediabatch'))
        .sort()
        .map((file) => `${file} ${sha256(file)}`);
    const before = snapshot();
    const requests = s.records().requests.length;

    const refused = await runAgainst(s, p);
    expectNoStackTrace(refused);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      `the ledger ${p.ledger} is held by another live run; nothing was changed`,
    );
    expect(snapshot()).toEqual(before);
    expect(s.records().requests).toHaveLength(requests);

    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('close', resolve));
    expectAllDoneOnce(s, p, name, await runAgainst(s, p, ['--json']), ['a', 'b']);
  }, 60_000);
});
