import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli, tempProject } from '../../support/cli.js';
import {
  cliEnv,
  type E2eProject,
  expectMoneyAgrees,
  filesBelow,
  jobsOfItem,
  manifestYaml,
  runAgainst,
  sha256File,
  startTestSandbox,
  statusJson,
} from '../../support/e2e.js';
import { boundService, closedPort, itemStates, ownProject, requestLog } from '../../support/services.js';

const sandboxes: SandboxHandle[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.close()));
});
async function service(): Promise<SandboxHandle> {
  const sandbox = await startTestSandbox();
  sandboxes.push(sandbox);
  return sandbox;
}

const items = (ids: string[]) =>
  `items:\n${ids.map((id) => `  - {id: ${id}, prompt: "take ${id}"}\n`).join('')}`;
const mp4s = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.mp4')) : [];

describe('a ledger belongs to one service', () => {
  it('a demo keeps its own ledger and folder; a later run against a service pays for every item there', async () => {
    const dir = tempProject({
      'manifests/demo.yaml': readFileSync(
        resolve(import.meta.dirname, '../../../manifests/demo.yaml'),
        'utf8',
      ),
    });
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const demo = await runCli(['run', 'manifests/demo.yaml', '--sandbox'], { cwd: dir });
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain('embedded sandbox');
    expect(demo.stdout).toContain('placeholder videos, no real spend');
    expect(mp4s(join(dir, 'out/sandbox/demo'))).toHaveLength(6);
    expect(existsSync(join(dir, 'out/demo'))).toBe(false);
    const demoLedger = { dir, ledger: join(dir, 'manifests/.mediabatch/sandbox/demo.sqlite') } as E2eProject;
    expect(boundService(demoLedger)).toBe('sandbox:embedded');
    expect(existsSync(join(dir, 'manifests/.mediabatch/demo.sqlite'))).toBe(false);

    const real = await service();
    const p: E2eProject = {
      dir,
      manifest: join(dir, 'manifests/demo.yaml'),
      ledger: join(dir, 'manifests/.mediabatch/demo.sqlite'),
      outDir: join(dir, 'out/demo'),
    };
    const run = await runCli(['run', 'manifests/demo.yaml', '--poll-interval', '0.1'], {
      cwd: dir,
      env: cliEnv(real),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('demo: 6/6 done');
    // Nothing of the demo counted: every item was submitted and paid for once on this service.
    for (const id of [
      'beach-sunrise',
      'city-night',
      'forest-fog',
      'desert-stars',
      'ocean-waves',
      'mountain-lake',
    ])
      expect(jobsOfItem(real, 'demo', id)).toHaveLength(1);
    expect(mp4s(p.outDir)).toHaveLength(6);
    expect(mp4s(join(dir, 'out/sandbox/demo'))).toHaveLength(6);
    expect(boundService(p)).toBe(real.baseUrl);
    await expectMoneyAgrees(real, p, 'demo');

    const status = await runCli(['status', p.manifest], { cwd: dir });
    expect(status.stdout).toContain(`service: ${real.baseUrl}`);
    const demoStatus = await runCli(['status', p.manifest, '--sandbox'], { cwd: dir });
    expect(demoStatus.stdout).toContain('service: the embedded sandbox (--sandbox)');
    expect(demoStatus.stdout).toContain('out/sandbox/demo/beach-sunrise.mp4');
  });

  it('refuses another service before any request, names both and points to --ledger', async () => {
    const first = await service();
    const second = await service();
    const p = ownProject('bound', `${manifestYaml('bound')}${items(['a', 'b'])}`);
    const ran = await runAgainst(first, p);
    expect(ran.code, ran.stderr).toBe(0);
    const firstRequests = requestLog(first).length;
    const before = itemStates(p);

    const other = await runAgainst(second, p, ['--json']);
    expect(other.code).toBe(2);
    expect(other.stdout).toBe('');
    expect(other.stderr).toContain(`belongs to ${first.baseUrl}, not ${second.baseUrl}`);
    expect(other.stderr).toContain('nothing was sent');
    expect(other.stderr).toMatch(/--ledger \.mediabatch\/bound\.127\.0\.0\.1-\d+\.sqlite/);
    expect(other.stderr).toContain(`--base-url ${first.baseUrl}`);
    expect(requestLog(second)).toEqual([]);
    expect(requestLog(first)).toHaveLength(firstRequests);
    expect(itemStates(p)).toEqual(before);

    const embedded = await runCli(['run', p.manifest, '--sandbox', '--ledger', p.ledger], { cwd: p.dir });
    expect(embedded.code).toBe(2);
    expect(embedded.stderr).toContain(`belongs to ${first.baseUrl}, not the embedded sandbox (--sandbox)`);
    expect(itemStates(p)).toEqual(before);

    // The same service spelt differently is the same service.
    const spelt = first.baseUrl.replace('/v1', '/v1/').replace('http://', 'HTTP://');
    const again = await runAgainst(first, p, ['--base-url', spelt]);
    expect(again.code, again.stderr).toBe(0);

    // A ledger of its own still writes into the first ledger's folder: refused before any request.
    const outputs = filesBelow(p.outDir).map((name) => [name, sha256File(join(p.outDir, name))]);
    const sameFolder = await runAgainst(second, p, ['--ledger', '.mediabatch/bound.second.sqlite']);
    expect(sameFolder.code).toBe(2);
    // The ledger that owns the folder comes first; another folder (which pays again) second.
    expect(sameFolder.stderr).toContain(
      "the output folder out/bound belongs to bound's ledger .mediabatch/bound.sqlite, not to .mediabatch/bound.second.sqlite",
    );
    expect(sameFolder.stderr).toContain('give it a folder of its own: set output.dir in batch.yaml');
    expect(requestLog(second)).toEqual([]);
    expect(filesBelow(p.outDir).map((name) => [name, sha256File(join(p.outDir, name))])).toEqual(outputs);

    writeFileSync(
      p.manifest,
      `${manifestYaml('bound', 'output: {dir: out/bound-second}\n')}${items(['a', 'b'])}`,
    );
    const separate = await runAgainst(second, p, ['--ledger', '.mediabatch/bound.second.sqlite']);
    expect(separate.code, separate.stderr).toBe(0);
    expect(jobsOfItem(second, 'bound', 'a')).toHaveLength(1);
    expect(jobsOfItem(first, 'bound', 'a')).toHaveLength(1);
    // The first ledger is read with the manifest whose folder it owns: status refuses a ledger
    // that does not own the output folder the manifest names.
    writeFileSync(p.manifest, `${manifestYaml('bound')}${items(['a', 'b'])}`);
    await expectMoneyAgrees(first, p, 'bound');

    const json = await statusJson(p);
    expect((json as unknown as { service: string }).service).toBe(first.baseUrl);
    const report = await runCli(['report', p.manifest], { cwd: p.dir });
    expect(report.stdout).toContain(`service: ${first.baseUrl}`);
  });

  it('an address that never answered leaves the ledger free: fixing the URL just works', async () => {
    const p = ownProject('free', `${manifestYaml('free')}${items(['a'])}`);
    const port = await closedPort();
    const nowhere = await runCli(['run', p.manifest, '--base-url', `http://127.0.0.1:${port}/v1`], {
      cwd: p.dir,
      env: { MEDIAGEN_API_KEY: 'mg_test_key_000000000000', MEDIABATCH_PREFLIGHT_SECONDS: '0.3' },
    });
    expect(nowhere.code).toBe(1);
    expect(boundService(p)).toBeNull();
    // A run refused before anything was recorded leaves no ledger at all, so none is bound.
    const status = await runCli(['status', p.manifest], { cwd: p.dir });
    expect(status.stdout).toContain('(not created yet: nothing has run)');

    const real = await service();
    const fixed = await runAgainst(real, p);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(boundService(p)).toBe(real.baseUrl);
    expect(itemStates(p)).toEqual({ a: 'done' });
  });
});
