import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { CLI, runCli, spawnCli } from '../../support/cli.js';
import {
  allPosts,
  asSandboxRun,
  cliEnv,
  type E2eProject,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';
import { itemStates, ownProject, takeItems } from '../../support/services.js';

/**
 * Issue cases 7, 8 and 9: a reader that goes away ends nothing badly, and every message says what
 * really happens.
 */

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const STACK = /EPIPE|Unhandled|\n\s+at /;

function manyItems(name: string, count: number): E2eProject {
  const ids = Array.from({ length: count }, (_, index) => `shot-${index}`);
  return ownProject(name, `${manifestYaml(name)}${takeItems(ids)}`);
}

/** Spawns the CLI and destroys its stdout once the first line has come: a pipe into `head -1`. */
async function readOneLine(args: string[], p: E2eProject) {
  const { child, done } = spawnCli(args, { cwd: p.dir, timeoutMs: 120_000 });
  child.stdout!.once('data', () => child.stdout!.destroy());
  return done;
}

describe('a closed stdout (case 7)', () => {
  it('status and plan into a pipe closed after one line end quietly, exit 0', async () => {
    const p = manyItems('piped', 3000);
    for (const command of ['status', 'plan']) {
      const result = await readOneLine([command, p.manifest], p);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toMatch(STACK);
      expect(result.stderr).toBe('');
    }
  });

  it('status | head -1 through a shell prints one line and no stack trace', async () => {
    const p = manyItems('headed', 3000);
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${CLI}" status batch.yaml | head -1`], {
      cwd: p.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    shell.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    shell.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const code = await new Promise((done) => shell.on('close', done));
    expect(code).toBe(0);
    expect(out.split('\n').filter(Boolean)).toHaveLength(1);
    expect(err).toBe('');
  });

  it('run keeps running after its reader leaves: every item saved, the ledger whole, no stack trace', async () => {
    const p = asSandboxRun(manyItems('keepon', 6), 'keepon');
    const result = await readOneLine(['run', p.manifest, '--sandbox', '--poll-interval', '0.1'], p);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(STACK);
    const states = ledgerRows<{ state: string }>(p, 'SELECT state FROM items');
    expect(states).toHaveLength(6);
    expect(states.every((row) => row.state === 'done')).toBe(true);
    const files = ledgerRows<{ n: number }>(p, 'SELECT COUNT(*) AS n FROM files')[0]!.n;
    expect(files).toBe(6);
    const check = ledgerRows<{ integrity_check: string }>(p, 'PRAGMA integrity_check');
    expect(check).toEqual([{ integrity_check: 'ok' }]);
  });
});

describe('what run says is what it does (case 8)', () => {
  const matrixYaml = (name: string) =>
    `${manifestYaml(name, 'matrix:\n  orientation: ["16:9", "9:16"]\n')}items:\n  - {id: kayak, prompt: "a kayak"}\n  - {id: m3, prompt: "m3"}\n  - {id: m4, prompt: "m4"}\n`;

  it('--only kayak runs its matrix children; --redo says new takes; --redo outside --only is exit 2', async () => {
    sandbox = await startTestSandbox();
    const p = ownProject('words', matrixYaml('words'));
    const only = await runAgainst(sandbox, p, ['--only', 'kayak']);
    expect(only.code, only.stderr).toBe(0);
    expect(only.stdout).toContain('Plan: 2 new;');
    expect(itemStates(p)).toEqual({ 'kayak.16-9': 'done', 'kayak.9-16': 'done' });
    expect(only.stdout).not.toContain('re-run the same command to resume');

    const posts = allPosts(sandbox).length;
    const outside = await runAgainst(sandbox, p, ['--redo', 'kayak.16-9', '--only', 'm4']);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('--redo kayak.16-9: not among the items --only selects');
    expect(allPosts(sandbox)).toHaveLength(posts);

    const redo = await runAgainst(sandbox, p, ['--redo', 'kayak.16-9', 'kayak.9-16', '--only', 'kayak']);
    expect(redo.code, redo.stderr).toBe(0);
    expect(redo.stdout).toContain('Plan: 2 new takes;');
    expect(redo.stdout).not.toContain('nothing to submit');
    expect(allPosts(sandbox)).toHaveLength(posts + 2);
  });

  it('the failure summary gives hints for the codes that failed only', async () => {
    sandbox = await startTestSandbox();
    const p = ownProject(
      'hints',
      `${manifestYaml('hints')}items:\n  - {id: ok, prompt: "fine"}\n  - {id: shy, prompt: "no [[fail:content_rejected]]"}\n`,
    );
    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('content_rejected: change the prompt.');
    expect(run.stdout).not.toContain('retries_exhausted');
  });

  it('stop-loss: the count it prints matches the items that failed, with several slots', async () => {
    sandbox = await startTestSandbox();
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const p = ownProject(
      'typo3',
      `${manifestYaml('typo3', 'model: acme-video-9\nconcurrency: 3\n')}${takeItems(ids)}`,
    );
    const run = await runAgainst(sandbox, p);
    expect(run.code).toBe(1);
    const failed = Object.values(itemStates(p)).filter((state) => state.startsWith('failed')).length;
    const more = /(\d+) more \([^)]*\) had been sent before the stop and failed alike/.exec(run.stdout);
    expect(run.stdout).toContain('stopped: 3 items in a row failed with invalid_parameter on model');
    expect(3 + (more ? Number(more[1]) : 0)).toBe(failed);
    expect(allPosts(sandbox)).toHaveLength(failed);
  });
});

describe('smaller words (case 9)', () => {
  const docs = resolve(import.meta.dirname, '../../../docs');

  it('help: --only reads ID|GLOB..., --sandbox says what it does per command, MEDIAGEN_BASE_URL listed', async () => {
    const dir = project('h', manifestYaml('h')).dir;
    const run = await runCli(['run', '--help'], { cwd: dir });
    expect(run.stdout).toContain('--only ID|GLOB...');
    expect(run.stdout).not.toContain('......');
    for (const command of ['status', 'report', 'plan']) {
      const help = await runCli([command, '--help'], { cwd: dir });
      expect(help.stdout).toContain('Read the ledger and output folder that `run --sandbox` writes');
      expect(help.stdout).not.toMatch(/Run against an embedded/);
    }
    const main = await runCli(['--help'], { cwd: dir });
    expect(main.stdout).toMatch(/MEDIAGEN_BASE_URL\s+Used when --base-url is not given/);
    const troubleshooting = readFileSync(join(docs, 'troubleshooting.md'), 'utf8');
    expect(troubleshooting).toContain('mediabatch import');
    expect(troubleshooting).toContain('mediabatch forget');
  });

  it('an id with an accent is refused as not ASCII; plan and status do not claim to have submitted', async () => {
    const p = ownProject('accent', `${manifestYaml('accent')}items:\n  - {id: café, prompt: "coffee"}\n`);
    const expectations = {
      run: 'nothing was submitted',
      plan: 'run would refuse it too, and submit nothing',
      status: 'no status can be shown',
    };
    for (const [command, words] of Object.entries(expectations)) {
      const result = await runCli([command, p.manifest, ...(command === 'run' ? ['--sandbox'] : [])], {
        cwd: p.dir,
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('ASCII letters (a-z, A-Z, no accents)');
      expect(result.stderr).toContain(words);
      if (command !== 'run') expect(result.stderr).not.toContain('nothing was submitted');
    }
  });

  it('import prints money as people read it', async () => {
    sandbox = await startTestSandbox();
    const p = ownProject('cents', `${manifestYaml('cents')}${takeItems(['a'])}`);
    expect((await runAgainst(sandbox, p)).code).toBe(0);
    // The lost-ledger path: the ledger is gone, import rebuilds it where it was (and so still owns
    // the output folder; another ledger would be refused it).
    rmSync(p.ledger);
    const imported = await runCli(['import', p.manifest], {
      cwd: p.dir,
      env: cliEnv(sandbox),
    });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/net spend \$\d+\.\d\d\./);
    expect(imported.stdout).not.toMatch(/\$\d+\.\d{6}/);
  });
});
