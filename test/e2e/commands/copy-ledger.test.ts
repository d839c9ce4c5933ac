import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER_MARKER } from '../../../src/downloads/output-owner.js';
import { type LedgerLocation, openLedger, postgresLocation } from '../../../src/ledger/open-ledger.js';
import type { BatchDump } from '../../../src/ledger/records.js';
import { normalised, richBatch } from '../../ledger/dump-fixtures.js';
import { type CliResult, runCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import {
  type PostgresTestServer,
  psql,
  skipPostgresTests,
  startPostgresServer,
} from '../../support/postgres-server.js';
import { fingerprint } from './fixtures.js';

/**
 * `mediabatch copy-ledger`, the real CLI: a batch moved SQLite -> PostgreSQL -> SQLite reads the
 * same (`status --json`, `export` as JSON Lines and CSV, every row of the ledger), and each refusal
 * writes nothing: a run holding the source, a target that records the batch, a wrong password
 * (never printed), a source without the batch.
 */

const LOCK_HOLDER = resolve(import.meta.dirname, '../../ledger/lock-holder.mjs');

const cli = (dir: string, args: string[]) => runCli(args, { cwd: dir });

/** What a reader of the batch sees through the ledger at `ledger`: status and both exports. */
async function views(
  dir: string,
  ledger: string[],
): Promise<{ status: CliResult; jsonl: CliResult; csv: CliResult }> {
  return {
    status: withoutClock(await cli(dir, ['status', 'batch.yaml', '--json', ...ledger])),
    jsonl: await cli(dir, ['export', 'batch.yaml', ...ledger]),
    csv: await cli(dir, ['export', 'batch.yaml', '--format', 'csv', ...ledger]),
  };
}

/** status counts the time left until outputs expire (seconds, and minutes in its warnings): the part that moves between two reads. */
function withoutClock(result: CliResult): CliResult {
  const stdout = result.stdout
    .replace(/"seconds_left": \d+/g, '"seconds_left": 0')
    .replace(/expires in \d+ min/g, 'expires in N min');
  return { ...result, stdout };
}

async function dumpOf(location: LedgerLocation, dir: string): Promise<BatchDump> {
  const ledger = await openLedger(location, 'moving', join(dir, 'batch.yaml'), { readonly: true });
  try {
    return await ledger.dumpBatch();
  } finally {
    await ledger.close();
  }
}

const sqlite = (path: string): LedgerLocation => ({ kind: 'sqlite', path, shown: path });

describe('mediabatch copy-ledger between SQLite files', () => {
  it('copies the batch whole into a new file, and refuses a second copy there, writing nothing', async () => {
    const { dir, ledger } = await richBatch();
    const copied = await cli(dir, ['copy-ledger', 'batch.yaml', '--to', 'copy.sqlite']);
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    expect(copied.stdout).toMatch(
      /moving: copied 6 item\(s\), 6 attempt\(s\), 3 file\(s\), \d+ event\(s\) and 2 run\(s\)/,
    );
    expect(normalised(await dumpOf(sqlite(join(dir, 'copy.sqlite')), dir))).toEqual(
      normalised(await dumpOf(sqlite(ledger), dir)),
    );

    const before = fingerprint(join(dir, 'copy.sqlite'));
    const again = await cli(dir, ['copy-ledger', 'batch.yaml', '--to', 'copy.sqlite']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already records items of moving.*nothing was copied/);
    expect(fingerprint(join(dir, 'copy.sqlite'))).toEqual(before);
  });

  it('refuses while a run holds the source (exit 3), and leaves no target file', async () => {
    const { dir, ledger } = await richBatch();
    const holder = spawn(process.execPath, ['--import', 'tsx', LOCK_HOLDER, ledger], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((done) => holder.stdout.once('data', () => done()));
      const result = await cli(dir, ['copy-ledger', 'batch.yaml', '--to', 'new/copy.sqlite']);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/held by another live run; nothing was copied/);
      expect(existsSync(join(dir, 'new'))).toBe(false);
    } finally {
      holder.kill();
    }
  });

  it('refuses a source without the batch, or without a ledger (exit 2), and --to the source itself', async () => {
    const { dir } = await richBatch();
    const missing = await cli(dir, [
      'copy-ledger',
      'batch.yaml',
      '--ledger',
      'none.sqlite',
      '--to',
      'c.sqlite',
    ]);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/no ledger at .*none\.sqlite/)]);
    // A file that holds another batch only.
    await (await openLedger(sqlite(join(dir, 'other.sqlite')), 'another', join(dir, 'batch.yaml'))).close();
    const other = await cli(dir, [
      'copy-ledger',
      'batch.yaml',
      '--ledger',
      'other.sqlite',
      '--to',
      'c.sqlite',
    ]);
    expect([other.code, other.stderr]).toEqual([2, expect.stringMatching(/records no batch named moving/)]);
    const self = await cli(dir, ['copy-ledger', 'batch.yaml', '--to', '.mediabatch/moving.sqlite']);
    expect([self.code, self.stderr]).toEqual([
      2,
      expect.stringMatching(/the ledger to copy into is the one the batch is copied from/),
    ]);
    expect(existsSync(join(dir, 'c.sqlite'))).toBe(false);
    const noTo = await cli(dir, ['copy-ledger', 'batch.yaml']);
    expect([noTo.code, noTo.stderr]).toEqual([2, expect.stringMatching(/missing --to/)]);
  });
});

describe.skipIf(skipPostgresTests)('mediabatch copy-ledger SQLite -> PostgreSQL -> SQLite', () => {
  let server: PostgresTestServer;
  let url: string;
  let dir: string;
  let ledger: string;

  beforeAll(async () => {
    server = await startPostgresServer();
    url = await server.createDatabase('copy');
    ({ dir, ledger } = await richBatch());
  }, 40_000);

  afterAll(async () => {
    await server?.stop();
  });

  const noPassword = (result: CliResult) => {
    expect(result.stdout).not.toContain(server.password);
    expect(result.stderr).not.toContain(server.password);
  };

  it('copies there and back, and the copy back reads the same: status --json, export, every row', async () => {
    const there = await cli(dir, ['copy-ledger', 'batch.yaml', '--to', url]);
    expect([there.code, there.stderr]).toEqual([0, '']);
    expect(there.stdout).toMatch(/to {3}postgres:\/\/mediabatch@127\.0\.0\.1:\d+\/copy_/);
    noPassword(there);
    const back = await cli(dir, ['copy-ledger', 'batch.yaml', '--ledger', url, '--to', 'back.sqlite']);
    expect([back.code, back.stderr]).toEqual([0, '']);
    noPassword(back);

    const first = await views(dir, []);
    const last = await views(dir, ['--ledger', 'back.sqlite']);
    for (const view of ['status', 'jsonl', 'csv'] as const) {
      expect(first[view].code).toBe(0);
      expect(last[view].stdout).toBe(first[view].stdout);
    }
    expect(JSON.parse(first.status.stdout).totals.items).toBe(6);

    const rows = normalised(await dumpOf(sqlite(ledger), dir));
    expect(normalised(await dumpOf(postgresLocation(url, {}), dir))).toEqual(rows);
    expect(normalised(await dumpOf(sqlite(join(dir, 'back.sqlite')), dir))).toEqual(rows);
  });

  it('reads the same from the PostgreSQL ledger itself (status --json, export)', async () => {
    const first = await views(dir, []);
    const shared = await views(dir, ['--ledger', url]);
    for (const view of ['status', 'jsonl', 'csv'] as const) {
      expect(shared[view].stderr).toBe('');
      expect(shared[view].stdout).toBe(first[view].stdout);
    }
  });

  it('a batch run on SQLite, moved to PostgreSQL, goes on there: its output folder follows, nothing is sent or paid again', async () => {
    const sandbox = await startTestSandbox();
    try {
      const p = project(
        'moved',
        `${manifestYaml('moved')}items:\n  - {id: a, prompt: one}\n  - {id: b, prompt: two}\n`,
      );
      const env = cliEnv(sandbox);
      const first = await runCli(['run', p.manifest, '--poll-interval', '0.1'], { cwd: p.dir, env });
      expect(first.code).toBe(0);
      const target = await server.createDatabase('moved');
      const moved = await runCli(['copy-ledger', p.manifest, '--to', target], { cwd: p.dir, env });
      expect(moved.code).toBe(0);
      expect(moved.stdout).toContain('now belongs to the copy');
      const marker = JSON.parse(readFileSync(join(p.outDir, OWNER_MARKER), 'utf8')) as { ledger: string };
      expect(marker.ledger).toMatch(/^postgres:\/\/mediabatch@127\.0\.0\.1:\d+\/moved_/);
      const requests = sandbox.records().requests.length;
      const again = await runCli(['run', p.manifest, '--ledger', target, '--poll-interval', '0.1'], {
        cwd: p.dir,
        env,
      });
      expect([again.code, again.stderr]).toEqual([0, expect.not.stringContaining('belongs to')]);
      const sent = sandbox.records().requests.slice(requests);
      expect(sent.filter((request) => request.method === 'POST')).toEqual([]);
      expect(sent.filter((request) => request.path.includes('/files/'))).toEqual([]);
      // The ledger copied from no longer owns the folder: a run on it is refused, nothing sent.
      const old = await runCli(['run', p.manifest, '--poll-interval', '0.1'], { cwd: p.dir, env });
      expect(old.code).toBe(2);
      expect(old.stderr).toMatch(
        /belongs to moved's ledger postgres:\/\/mediabatch@[^ ]+, not to \.mediabatch\/moved\.sqlite/,
      );
      expect(old.stderr).toMatch(
        /To go on with the ledger that owns the folder: --ledger postgres:\/\/mediabatch@/,
      );
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('refuses a PostgreSQL target that records the batch, writing nothing', async () => {
    const count = () =>
      psql(url, "SELECT (SELECT count(*) FROM attempts) || ',' || (SELECT count(*) FROM events)");
    const before = await count();
    const again = await cli(dir, ['copy-ledger', 'batch.yaml', '--to', url]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already records items of moving/);
    noPassword(again);
    expect(await count()).toBe(before);
  });

  it('refuses while a runner of the shared batch is alive (exit 3)', async () => {
    const live = await server.createDatabase('copy_live');
    expect((await cli(dir, ['copy-ledger', 'batch.yaml', '--to', live])).code).toBe(0);
    await psql(
      live,
      "INSERT INTO runs (batch_id, pid, runner, started_at, heartbeat_at) SELECT id, 1, 'elsewhere', 'now', now() FROM batches",
    );
    const result = await cli(dir, [
      'copy-ledger',
      'batch.yaml',
      '--ledger',
      live,
      '--to',
      'from-live.sqlite',
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/held by another live run; nothing was copied/);
    expect(existsSync(join(dir, 'from-live.sqlite'))).toBe(false);
  });

  it('a wrong password is exit 2, and neither password is printed', async () => {
    const wrong = new URL(url);
    wrong.password = 'not-the-password-4711';
    for (const args of [
      ['--to', wrong.href],
      ['--ledger', wrong.href, '--to', 'never.sqlite'],
    ]) {
      const result = await cli(dir, ['copy-ledger', 'batch.yaml', ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/cannot open the ledger postgres:\/\/mediabatch@.*nothing was copied/);
      noPassword(result);
      expect(`${result.stdout}${result.stderr}`).not.toContain('not-the-password-4711');
    }
    expect(existsSync(join(dir, 'never.sqlite'))).toBe(false);
  });
});
