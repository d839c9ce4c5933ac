import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  copyLedger,
  ERROR_CODES,
  type ErrorCode,
  ExitCode,
  exitCodeOfError,
  exportItems,
  forgetJobs,
  importJobs,
  keepTakes,
  LedgerHeldError,
  loadDefinition,
  loadManifest,
  type Manifest,
  ManifestError,
  MediabatchError,
  OptionError,
  plan,
  run,
  type SandboxHandle,
  status,
  UserError,
  writeExport,
  writeGallery,
  writePlan,
} from '../../src/index.js';
import { canMount } from '../e2e/faults/support.js';
import { spawnCli } from '../support/cli.js';
import {
  allPosts,
  cliEnv,
  type E2eProject,
  manifestYaml,
  startTestSandbox,
  waitUntil,
} from '../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../support/postgres-server.js';
import { closedPort, impostor, ownProject, routeBlockingProxy, takeItems } from '../support/services.js';

/**
 * Every code of ERROR_CODES, reached through a public function of the package root (src/index.ts)
 * with real parts: SQLite ledgers, the sandbox on loopback, local HTTP servers, the file system.
 * Each case asserts the error's `code` and the exit code the CLI's table gives it, never its words, and is recorded; the last
 * test asserts that the codes reached are exactly ERROR_CODES, so a new code needs a case here.
 */

/** The codes a case below asserted, with the cases that reached each. */
const reached = new Map<ErrorCode, string[]>();
/** Codes no case could reach on this machine, with why (asserted by the last test). */
const unreachedHere = new Map<ErrorCode, string>();

/** The error `action` throws or rejects with; fails when it neither throws nor rejects. */
async function refusal(action: () => unknown): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal, but the call succeeded');
}

/** Asserts a UserError's code and exit code (not its words), and records the case. */
async function expectRefusal(
  caseName: string,
  action: () => unknown,
  code: ErrorCode,
  exitCode: ExitCode,
): Promise<UserError> {
  const error = await refusal(action);
  expect(error, `${caseName}: ${String(error)}`).toBeInstanceOf(UserError);
  expect(error).toBeInstanceOf(MediabatchError);
  const { code: gotCode } = error as UserError;
  const gotExit = exitCodeOfError(gotCode);
  expect({ code: gotCode, exitCode: gotExit }, `${caseName}: ${(error as Error).message}`).toEqual({
    code,
    exitCode,
  });
  reached.set(code, [...(reached.get(code) ?? []), caseName]);
  return error as UserError;
}

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

/** The shared sandbox as options: nothing from the process's environment. */
const service = () => ({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, env: {} });

function batch(name: string, ids: readonly string[] = ['a', 'b'], extra = '', marker = ''): E2eProject {
  return ownProject(name, `${manifestYaml(name, extra)}${takeItems(ids, marker)}`);
}

const manifestOf = (p: E2eProject): Manifest => loadManifest(p.manifest);

/** The shared sandbox's jobs of one manifest. */
const jobsOf = (name: string) =>
  sandbox.records().jobs.filter((job) => job.metadata['mediabatch.manifest'] === name);

/**
 * The POSTs that are not another manifest's job: this file's cases share one sandbox, and a case
 * whose run stopped mid-flight (ledger_write_failed) may still see a committed POST answered.
 */
const postsNotOfOthers = (name: string) => {
  const manifestOf = new Map(
    sandbox.records().jobs.map((job) => [job.id, job.metadata['mediabatch.manifest']]),
  );
  return allPosts(sandbox).filter((post) => post.jobId === null || manifestOf.get(post.jobId) === name);
};

/** A run that must finish with every item done, before a case builds on its ledger. */
async function ranToDone(manifest: Manifest, options: Parameters<typeof run>[1]): Promise<void> {
  const result = await run(manifest, options).result;
  expect(result.outcome, JSON.stringify(result.status.totals)).toBe('done');
}

/** test/ledger/lock-holder.mjs: another process that holds the ledger's run lock until killed. */
async function holdLedgerElsewhere(ledgerPath: string): Promise<ChildProcess> {
  mkdirSync(join(ledgerPath, '..'), { recursive: true });
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', resolve(import.meta.dirname, '../ledger/lock-holder.mjs'), ledgerPath],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  const said = await new Promise<string>((resolvePromise, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolvePromise(chunk.toString()));
    child.once('exit', (code) => reject(new Error(`lock-holder exited ${code}`)));
  });
  expect(said).toBe('held\n');
  return child;
}

describe('every error code, through the public API', () => {
  it('invalid_option: an option of the wrong kind or unknown, before anything is opened', async () => {
    const p = batch('badopt');
    const manifest = manifestOf(p);
    const wrongKind = await expectRefusal(
      'run(m, { ledger: 42 }) throws at once',
      () => run(manifest, { ledger: 42 } as never),
      'invalid_option',
      ExitCode.Usage,
    );
    expect(wrongKind).toBeInstanceOf(OptionError);
    await expectRefusal(
      'importJobs(m, { sinceHours: -1 }) rejects',
      () => importJobs(manifest, { ...service(), sinceHours: -1 }),
      'invalid_option',
      ExitCode.Usage,
    );
    await expectRefusal(
      'exportItems(m, { states: ["bogus"] })',
      () => exportItems(manifest, { states: ['bogus'] } as never),
      'invalid_option',
      ExitCode.Usage,
    );
    expect(existsSync(p.ledger)).toBe(false);
  });

  it('manifest_invalid: YAML that does not parse, and a manifest that does not check', async () => {
    const p = batch('badman');
    const broken = await expectRefusal(
      'loadManifest of YAML with an unclosed flow sequence',
      () => loadManifest({ yaml: 'version: 1\nname: [unclosed\n', baseDir: p.dir }),
      'manifest_invalid',
      ExitCode.Usage,
    );
    expect(broken).toBeInstanceOf(ManifestError);
    writeFileSync(p.manifest, `${manifestYaml('badman')}items:\n  - {id: a}\n`);
    await expectRefusal(
      'loadManifest of a file whose item has no prompt',
      () => loadManifest(p.manifest),
      'manifest_invalid',
      ExitCode.Usage,
    );
  });

  it('setting_invalid: an environment variable or a base URL the library cannot use', async () => {
    const p = batch('badsetting');
    const manifest = manifestOf(p);
    await expectRefusal(
      "plan with env MEDIABATCH_HTTP_TIMEOUT 'abc'",
      () => plan(manifest, { env: { MEDIABATCH_HTTP_TIMEOUT: 'abc' } }),
      'setting_invalid',
      ExitCode.Usage,
    );
    await expectRefusal(
      "run with baseUrl 'ftp://x'",
      () => run(manifest, { baseUrl: 'ftp://x', apiKey: 'k', env: {} }).result,
      'setting_invalid',
      ExitCode.Usage,
    );
    await expectRefusal(
      "status with env MEDIABATCH_PREFLIGHT_SECONDS '-1'",
      () => status(manifest, { env: { MEDIABATCH_PREFLIGHT_SECONDS: '-1' } }),
      'setting_invalid',
      ExitCode.Usage,
    );
    expect(existsSync(p.ledger)).toBe(false);
  });

  it('selection_empty: only, redo and forget ids that select nothing', async () => {
    const p = batch('selection');
    const manifest = manifestOf(p);
    await expectRefusal(
      "run with only: ['nope']",
      () => run(manifest, { ...service(), only: ['nope'] }).result,
      'selection_empty',
      ExitCode.Usage,
    );
    await expectRefusal(
      "run with redo: ['a'] while a is not done",
      () => run(manifest, { ...service(), redo: ['a'] }).result,
      'selection_empty',
      ExitCode.Usage,
    );
    // A refused run leaves no ledger behind; a run of b makes one, and forget refuses an id of no item.
    expect(existsSync(p.ledger)).toBe(false);
    await ranToDone(manifest, { ...service(), only: ['b'] });
    await expectRefusal(
      "forgetJobs with ids: ['nope']",
      () => forgetJobs(manifest, { ...service(), ids: ['nope'] }),
      'selection_empty',
      ExitCode.Usage,
    );
    expect(jobsOf('selection').length).toBe(1);
  });

  it('keep_invalid, keep_file_missing: a bad keep entry, a kept file gone; nothing is kept', async () => {
    const p = batch('keeping');
    const manifest = manifestOf(p);
    await ranToDone(manifest, service());
    await expectRefusal(
      "keepTakes with entries: ['a:one']",
      () => keepTakes(manifest, { ...service(), entries: ['a:one'] }),
      'keep_invalid',
      ExitCode.Usage,
    );
    rmSync(join(p.outDir, 'b.mp4'));
    await expectRefusal(
      "keepTakes with entries: ['a:1', 'b:1'] once b.mp4 is deleted",
      () => keepTakes(manifest, { ...service(), entries: ['a:1', 'b:1'] }),
      'keep_file_missing',
      ExitCode.Usage,
    );
  });

  it('plan_invalid, plan_differs: an approved plan altered, one the manifest no longer matches; nothing is sent', async () => {
    const p = batch('approval', ['a', 'b'], 'budget_usd: "5"\n');
    const to = join(p.dir, 'plan.json');
    await writePlan(manifestOf(p), { ...service(), to });
    const altered = join(p.dir, 'altered.json');
    writeFileSync(
      altered,
      readFileSync(to, 'utf8').replace(/"total_at_most_usd": "[^"]+"/, '"total_at_most_usd": "99.000000"'),
    );
    await expectRefusal(
      'run with plan: a plan whose total was raised by hand',
      () => run(manifestOf(p), { ...service(), plan: altered }).result,
      'plan_invalid',
      ExitCode.Usage,
    );
    writeFileSync(p.manifest, readFileSync(p.manifest, 'utf8').replace('budget_usd: "5"', 'budget_usd: "6"'));
    await expectRefusal(
      'run with plan: the budget edited after the plan',
      () => run(manifestOf(p), { ...service(), plan: to }).result,
      'plan_differs',
      ExitCode.Usage,
    );
    expect(jobsOf('approval')).toHaveLength(0);
  });

  it('service_missing: no base URL and no sandbox', async () => {
    const manifest = manifestOf(batch('noservice'));
    await expectRefusal(
      'run with env {}',
      () => run(manifest, { env: {} }).result,
      'service_missing',
      ExitCode.Usage,
    );
    await expectRefusal(
      'importJobs with env {}',
      () => importJobs(manifest, { env: {} }),
      'service_missing',
      ExitCode.Usage,
    );
    await expectRefusal(
      'forgetJobs with env {}',
      () => forgetJobs(manifest, { env: {} }),
      'service_missing',
      ExitCode.Usage,
    );
  });

  it('api_key_missing: a base URL without a key', async () => {
    const manifest = manifestOf(batch('nokey'));
    const requests = sandbox.records().requests.length;
    await expectRefusal(
      'run with a baseUrl and env {}',
      () => run(manifest, { baseUrl: sandbox.baseUrl, env: {} }).result,
      'api_key_missing',
      ExitCode.Usage,
    );
    await expectRefusal(
      'plan with an explicit baseUrl and env {}',
      () => plan(manifest, { baseUrl: sandbox.baseUrl, env: {} }),
      'api_key_missing',
      ExitCode.Usage,
    );
    expect(sandbox.records().requests).toHaveLength(requests);
  });

  it('service_wrong_route: the sandbox address without /v1', async () => {
    const manifest = manifestOf(batch('noroute'));
    const withoutV1 = sandbox.baseUrl.replace(/\/v1\/?$/, '');
    expect(withoutV1).not.toBe(sandbox.baseUrl);
    const posts = allPosts(sandbox).length;
    await expectRefusal(
      'run against the address without /v1',
      () => run(manifest, { ...service(), baseUrl: withoutV1 }).result,
      'service_wrong_route',
      ExitCode.Usage,
    );
    await expectRefusal(
      'plan against the address without /v1',
      () => plan(manifest, { ...service(), baseUrl: withoutV1 }),
      'service_wrong_route',
      ExitCode.Usage,
    );
    expect(allPosts(sandbox)).toHaveLength(posts);
  });

  it('not_the_service: an address that answers HTML', async () => {
    const manifest = manifestOf(batch('impostor'));
    const page = await impostor(200, '<html>welcome to the router</html>');
    await expectRefusal(
      'run against a local server answering HTML',
      () => run(manifest, { baseUrl: page.baseUrl, apiKey: 'k', env: {} }).result,
      'not_the_service',
      ExitCode.Usage,
    );
    await expectRefusal(
      'importJobs against a local server answering HTML',
      () => importJobs(manifest, { baseUrl: page.baseUrl, apiKey: 'k', env: {} }),
      'not_the_service',
      ExitCode.Usage,
    );
    expect(page.requests.every((request) => request.method === 'GET')).toBe(true);
  });

  it('service_host_unknown: a host name the DNS does not know, for run and plan (exit 2)', async () => {
    const manifest = manifestOf(batch('nohost'));
    const options = { baseUrl: 'http://mediabatch-typo.invalid/v1', apiKey: 'k', env: {} };
    await expectRefusal(
      'run against a .invalid host',
      () => run(manifest, options).result,
      'service_host_unknown',
      ExitCode.Usage,
    );
    await expectRefusal(
      'plan against a .invalid host',
      () => plan(manifest, options),
      'service_host_unknown',
      ExitCode.Usage,
    );
  });

  it('service_unreachable: nothing listens for a run (exit 1)', async () => {
    const manifest = manifestOf(batch('unreachable'));
    const port = await closedPort();
    await expectRefusal(
      "run against a closed port, MEDIABATCH_PREFLIGHT_SECONDS '0.3'",
      () =>
        run(manifest, {
          baseUrl: `http://127.0.0.1:${port}/v1`,
          apiKey: 'k',
          env: { MEDIABATCH_PREFLIGHT_SECONDS: '0.3' },
        }).result,
      'service_unreachable',
      ExitCode.ItemsNotDone,
    );
  });

  it('service_read_failed: the job list cannot be read for import (exit 3)', async () => {
    // GET /account answers, GET /jobs is refused: import cannot list what to rebuild.
    const proxy = await routeBlockingProxy(
      sandbox.baseUrl,
      (method, path) => method === 'GET' && path.startsWith('/v1/jobs'),
    );
    const p = batch('unlisted');
    await expectRefusal(
      'importJobs through a proxy that refuses GET /v1/jobs',
      () => importJobs(manifestOf(p), { ...service(), baseUrl: proxy.baseUrl }),
      'service_read_failed',
      ExitCode.Refused,
    );
  });

  it('account_refused: a wrong key, for import and for forget (run reports it in its result)', async () => {
    const p = batch('refused', ['slow'], '', ' [[run:60]]');
    const manifest = manifestOf(p);
    const wrongKey = { ...service(), apiKey: 'mg_wrong_key_0000000000' };
    await expectRefusal(
      'importJobs with a key the sandbox does not know',
      () => importJobs(manifest, wrongKey),
      'account_refused',
      ExitCode.Refused,
    );

    // forget only asks the service when the ledger has a job in flight: a run killed mid-job leaves one.
    const { child, done } = spawnCli(['run', p.manifest, '--poll-interval', '0.1'], {
      cwd: p.dir,
      env: cliEnv(sandbox),
    });
    await waitUntil(
      () => sandbox.records().jobs.some((job) => job.metadata['mediabatch.manifest'] === 'refused'),
      20_000,
      'the run to submit its job',
    );
    await waitUntil(
      async () =>
        (await status(manifest)).items.some((item) => item.state === 'in_flight' && item.job_id !== null),
      20_000,
      'the ledger to record the job',
    );
    child.kill('SIGKILL');
    await done;
    await expectRefusal(
      'forgetJobs with a key the sandbox does not know, a job in flight',
      () => forgetJobs(manifest, wrongKey),
      'account_refused',
      ExitCode.Refused,
    );
    // The right key: the job is still known, so it is kept.
    const kept = await forgetJobs(manifest, service());
    expect(kept.map((job) => [job.itemId, job.lost])).toEqual([['slow', false]]);

    // A run that has recorded nothing rejects before it writes anything, and leaves no ledger.
    const other = batch('refusedrun');
    await expectRefusal(
      'run with a key the sandbox does not know, nothing recorded',
      () => run(manifestOf(other), wrongKey).result,
      'account_refused',
      ExitCode.Refused,
    );
    expect(existsSync(other.ledger)).toBe(false);
  }, 60_000);

  it('ledger_held: a live run in this process, and another process holding the lock', async () => {
    const p = batch('held', ['a', 'b'], '', ' [[run:1]]');
    const manifest = manifestOf(p);
    const first = run(manifest, service());
    await new Promise<void>((resolvePromise) => first.once('item', () => resolvePromise()));
    const second = await expectRefusal(
      'a second run() on the ledger of a live run',
      () => run(manifest, service()).result,
      'ledger_held',
      ExitCode.Refused,
    );
    expect(second).toBeInstanceOf(LedgerHeldError);
    await expectRefusal(
      'copyLedger from the ledger of a live run',
      () => copyLedger(manifest, { to: join(p.dir, 'copy.sqlite') }),
      'ledger_held',
      ExitCode.Refused,
    );
    expect(existsSync(join(p.dir, 'copy.sqlite'))).toBe(false);
    expect((await first.result).outcome).toBe('done');

    const q = batch('heldimport');
    await holdLedgerElsewhere(q.ledger);
    await expectRefusal(
      'importJobs while test/ledger/lock-holder.mjs holds the lock',
      () => importJobs(manifestOf(q), service()),
      'ledger_held',
      ExitCode.Refused,
    );
    expect(existsSync(q.ledger)).toBe(false);
  });

  it('ledger_other_service: a ledger bound to one sandbox, pointed at another', async () => {
    const p = batch('otherservice');
    const manifest = manifestOf(p);
    await ranToDone(manifest, service());
    const other = await startTestSandbox();
    onTestFinished(() => other.close());
    const elsewhere = { baseUrl: other.baseUrl, apiKey: other.apiKey, env: {} };
    await expectRefusal(
      "run against another sandbox with the first one's ledger",
      () => run(manifest, elsewhere).result,
      'ledger_other_service',
      ExitCode.Usage,
    );
    await expectRefusal(
      "plan against another sandbox with the first one's ledger",
      () => plan(manifest, elsewhere),
      'ledger_other_service',
      ExitCode.Usage,
    );
    expect(other.records().requests).toEqual([]);
  });

  it('ledger_unusable: a folder where the ledger should be, a junk file opened to read (exit 2 both)', async () => {
    const p = batch('ledgerdir');
    const manifest = manifestOf(p);
    mkdirSync(p.ledger, { recursive: true });
    await expectRefusal(
      'run with a folder at the ledger path',
      () => run(manifest, service()).result,
      'ledger_unusable',
      ExitCode.Usage,
    );
    const q = batch('ledgerjunk');
    mkdirSync(join(q.ledger, '..'), { recursive: true });
    writeFileSync(q.ledger, 'this is not sqlite\n'.repeat(100));
    await expectRefusal(
      'run with a junk file at the ledger path',
      () => run(manifestOf(q), service()).result,
      'ledger_unusable',
      ExitCode.Usage,
    );
    await expectRefusal(
      'status reading a junk file at the ledger path',
      () => status(manifestOf(q)),
      'ledger_unusable',
      ExitCode.Usage,
    );
    await expectRefusal(
      'exportItems reading a junk file at the ledger path',
      () => exportItems(manifestOf(q)),
      'ledger_unusable',
      ExitCode.Usage,
    );
    expect([...jobsOf('ledgerdir'), ...jobsOf('ledgerjunk')]).toEqual([]);
  });

  // A full disk under the ledger is the one honest way to make SQLite fail mid-run: a small tmpfs
  // mounted on the ledger's folder, filled once the run has begun. Only root may mount one.
  const mountable = canMount();
  if (!mountable && process.env.CI !== 'true') {
    unreachedHere.set('ledger_write_failed', 'this process may not mount a tmpfs (run as root)');
    console.warn('NOTICE: ledger_write_failed is not tested here: this process may not mount a tmpfs');
  }
  it.skipIf(!mountable && process.env.CI !== 'true')(
    'ledger_write_failed: the ledger disk fills mid-run',
    async () => {
      const p = batch('ledgerfull', ['a', 'b', 'c', 'd', 'e', 'f'], '', ' [[run:1]]');
      const manifest = manifestOf(p);
      const folder = join(p.ledger, '..');
      mkdirSync(folder, { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', folder]);
      onTestFinished(() => {
        execFileSync('umount', ['-l', folder]);
      });
      const handle = run(manifest, service());
      // Handled from the start: the rejection is asserted below, once the disk is full.
      handle.result.catch(() => undefined);
      await waitUntil(() => jobsOf('ledgerfull').length >= 2, 20_000, 'the first jobs');
      expect(() => writeFileSync(join(folder, 'filler.bin'), Buffer.alloc(16 * 1024 * 1024))).toThrow(
        /ENOSPC/,
      );
      await expectRefusal(
        'run() whose ledger disk fills mid-run',
        () => handle.result,
        'ledger_write_failed',
        ExitCode.ItemsNotDone,
      );
    },
    60_000,
  );

  it('ledger_lost: the ledger deleted while the service holds the manifest jobs', async () => {
    const p = batch('lost');
    const manifest = manifestOf(p);
    await ranToDone(manifest, service());
    const posts = postsNotOfOthers('lost').length;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${p.ledger}${suffix}`, { force: true });
    await expectRefusal(
      'run after its ledger was deleted',
      () => run(manifest, service()).result,
      'ledger_lost',
      ExitCode.Usage,
    );
    await expectRefusal(
      'plan after its ledger was deleted',
      () => plan(manifest, service()),
      'ledger_lost',
      ExitCode.Usage,
    );
    // A fresh ledger of another name meets the folder's owner first, as run does.
    await expectRefusal(
      'plan with a fresh ledger of another name',
      () => plan(manifest, { ...service(), ledger: join(p.dir, 'fresh.sqlite') }),
      'output_owned',
      ExitCode.Usage,
    );
    expect(postsNotOfOthers('lost')).toHaveLength(posts);
  });

  it('ledger_not_empty: import into a ledger that records attempts', async () => {
    const p = batch('notempty');
    const manifest = manifestOf(p);
    await ranToDone(manifest, service());
    await expectRefusal(
      'importJobs into the ledger of the run',
      () => importJobs(manifest, service()),
      'ledger_not_empty',
      ExitCode.Usage,
    );
    const copy = join(p.dir, 'copy.sqlite');
    await copyLedger(manifest, { to: copy });
    await expectRefusal(
      'copyLedger into a ledger that records the batch',
      () => copyLedger(manifest, { to: copy }),
      'ledger_not_empty',
      ExitCode.Usage,
    );
  });

  it('ledger_missing: forget without a ledger', async () => {
    const p = batch('missing');
    const manifest = manifestOf(p);
    await expectRefusal(
      'forgetJobs against the sandbox, no ledger yet',
      () => forgetJobs(manifest, service()),
      'ledger_missing',
      ExitCode.Usage,
    );
    await expectRefusal(
      'forgetJobs with sandbox: true, no ledger yet',
      () => forgetJobs(manifest, { sandbox: true, env: {} }),
      'ledger_missing',
      ExitCode.Usage,
    );
    await expectRefusal(
      'copyLedger from no ledger',
      () => copyLedger(manifest, { to: join(p.dir, 'copy.sqlite') }),
      'ledger_missing',
      ExitCode.Usage,
    );
    expect(existsSync(join(p.dir, 'copy.sqlite'))).toBe(false);
    expect(existsSync(p.ledger)).toBe(false);
  });

  it('output_owned: two manifests on one output folder', async () => {
    const p = batch('owner', ['a'], 'output: {dir: shared}\n');
    await ranToDone(manifestOf(p), service());
    // The second manifest lives in the first one's folder, so `shared` is the same folder.
    const intruderFile = join(p.dir, 'intruder.yaml');
    writeFileSync(intruderFile, `${manifestYaml('intruder', 'output: {dir: shared}\n')}${takeItems(['a'])}`);
    const intruder = loadManifest(intruderFile);
    expect(intruder.outputDir).toBe(manifestOf(p).outputDir);
    const posts = allPosts(sandbox).length;
    await expectRefusal(
      "run of a second manifest into the first one's folder",
      () => run(intruder, service()).result,
      'output_owned',
      ExitCode.Usage,
    );
    await expectRefusal(
      "plan of a second manifest into the first one's folder",
      () => plan(intruder, service()),
      'output_owned',
      ExitCode.Usage,
    );
    await expectRefusal(
      "importJobs of a second manifest into the first one's folder",
      () => importJobs(intruder, service()),
      'output_owned',
      ExitCode.Usage,
    );
    expect(allPosts(sandbox)).toHaveLength(posts);
  });

  it('output_unusable: a file where the output folder should be (exit 2)', async () => {
    const p = batch('outfile');
    mkdirSync(join(p.outDir, '..'), { recursive: true });
    writeFileSync(p.outDir, 'in the way');
    const posts = allPosts(sandbox).length;
    await expectRefusal(
      'run with a file at the output folder path',
      () => run(manifestOf(p), service()).result,
      'output_unusable',
      ExitCode.Usage,
    );
    expect(allPosts(sandbox)).toHaveLength(posts);
  });

  it('target_refused: the gallery over the manifest, and a link lifetime for a local folder', async () => {
    const p = batch('target');
    const manifest = manifestOf(p);
    await expectRefusal(
      "writeGallery to the manifest's own path",
      () => writeGallery(manifest, { to: p.manifest }),
      'target_refused',
      ExitCode.Usage,
    );
    await expectRefusal(
      'writeGallery with urlLifetimeSeconds for a local output folder',
      () => writeGallery(manifest, { urlLifetimeSeconds: 3600 }),
      'target_refused',
      ExitCode.Usage,
    );
    expect(loadManifest(p.manifest).name).toBe('target');
  });

  it('write_failed: an export to a folder that does not exist; a gallery in a bucket that does not answer', async () => {
    const p = batch('exportfail');
    await expectRefusal(
      'writeExport to missing/x.jsonl',
      () => writeExport(manifestOf(p), { to: 'missing/x.jsonl', cwd: p.dir }),
      'write_failed',
      ExitCode.ItemsNotDone,
    );
    expect(existsSync(join(p.dir, 'missing'))).toBe(false);
    const port = await closedPort();
    const q = batch('deadbucket', ['a'], 'output: {dir: "s3://no-bucket/x"}\n');
    await expectRefusal(
      'writeGallery into an s3:// location whose endpoint is a closed port',
      () =>
        writeGallery(manifestOf(q), {
          env: {
            AWS_ACCESS_KEY_ID: 'test',
            AWS_SECRET_ACCESS_KEY: 'test-secret',
            AWS_REGION: 'us-east-1',
            AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
          },
        }),
      'write_failed',
      ExitCode.ItemsNotDone,
    );
  }, 60_000);

  it('ledger_read_failed: a ledger that opens, but whose items table is damaged (exit 1)', async () => {
    const p = batch('readfail');
    const manifest = manifestOf(p);
    await ranToDone(manifest, service());
    // Everything in the file itself (no WAL left), then the items table's first page overwritten.
    const db = new Database(p.ledger);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'items'").get() as {
      rootpage: number;
    };
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.close();
    const file = openSync(p.ledger, 'r+');
    writeSync(file, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (rootpage - 1) * pageSize);
    closeSync(file);
    await expectRefusal(
      'status of a ledger whose items table is damaged',
      () => status(manifest),
      'ledger_read_failed',
      ExitCode.ItemsNotDone,
    );
  });

  it('invalid_usage: a link lifetime out of range for a bucket, and loadManifest of neither path nor text', async () => {
    const p = batch('usage', ['a'], 'output: {dir: "s3://some-bucket/x"}\n');
    const manifest = manifestOf(p);
    await expectRefusal(
      'writeGallery urlLifetimeSeconds 30 on an s3:// location',
      () => writeGallery(manifest, { urlLifetimeSeconds: 30, env: {} }),
      'invalid_usage',
      ExitCode.Usage,
    );
    await expectRefusal(
      'writeGallery urlLifetimeSeconds of 8 days on an s3:// location',
      () => writeGallery(manifest, { urlLifetimeSeconds: 8 * 24 * 3600, env: {} }),
      'invalid_usage',
      ExitCode.Usage,
    );
    await expectRefusal(
      'loadManifest of a number',
      () => loadManifest(42 as never),
      'invalid_usage',
      ExitCode.Usage,
    );
  });

  describe('with a shared PostgreSQL ledger', () => {
    const postgres = skipPostgresTests ? null : usePostgresServer();

    it("definition_differs: a manifest that is not its shared batch's definition; nothing is sent", async () => {
      if (postgres === null) {
        unreachedHere.set('definition_differs', 'no PostgreSQL server on this machine');
        return;
      }
      const url = await postgres.server.createDatabase('defined');
      await ranToDone(manifestOf(batch('defined', ['a', 'b'], 'budget_usd: "1.00"\n')), {
        ...service(),
        ledger: url,
      });
      const posts = sandbox.records().requests.length;
      const other = manifestOf(batch('defined', ['a', 'b'], 'budget_usd: "0.50"\n'));
      const error = await expectRefusal(
        'run with budget_usd 0.50 on a batch defined with 1.00',
        () => run(other, { ...service(), ledger: url }).result,
        'definition_differs',
        ExitCode.Usage,
      );
      expect(error.fields).toMatchObject({ revision: 1, settings: ['budget_usd'], option: 'redefine' });
      expect(sandbox.records().requests.length).toBe(posts);
    });

    it('definition_missing and output_dir_unknown: a runner without the manifest, refused before anything is sent', async () => {
      if (postgres === null) {
        for (const code of ['definition_missing', 'output_dir_unknown'] as const)
          unreachedHere.set(code, 'no PostgreSQL server on this machine');
        return;
      }
      const url = await postgres.server.createDatabase('worker');
      const missing = await expectRefusal(
        'loadDefinition of a batch the shared ledger holds no definition of',
        () => loadDefinition({ ledger: url, batch: 'worker', env: {} }),
        'definition_missing',
        ExitCode.Usage,
      );
      expect(missing.fields).toMatchObject({ batch: 'worker' });
      const p = batch('worker', ['a']);
      await ranToDone(manifestOf(p), { ...service(), ledger: url });
      const unknown = await expectRefusal(
        'loadDefinition of a batch saving to a folder, without outputDir',
        () => loadDefinition({ ledger: url, batch: 'worker', env: {} }),
        'output_dir_unknown',
        ExitCode.Usage,
      );
      expect(unknown.fields).toMatchObject({ option: 'outputDir', batch: 'worker' });
      // Given where the folder is, it is the batch as defined: nothing left to do.
      const defined = await loadDefinition({ ledger: url, batch: 'worker', outputDir: p.outDir, env: {} });
      expect(defined.outputDir).toBe(p.outDir);
      const planned = await plan(defined, { ledger: url, env: {} });
      expect(planned.totals.to_submit).toBe(0);
    });
  });

  it('the codes reached above are exactly ERROR_CODES: a new code needs a case here', () => {
    const expected = ERROR_CODES.filter((code) => !unreachedHere.has(code));
    expect([...reached.keys()].sort()).toEqual([...expected].sort());
    for (const [code, why] of unreachedHere) console.warn(`NOTICE: ${code} not reached here: ${why}`);
  });
});
