import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  exportItems,
  importJobs,
  LedgerHeldError,
  loadManifest,
  ManifestError,
  MediabatchError,
  OptionError,
  plan,
  type RunEvents,
  run,
  type SandboxHandle,
  startSandbox,
  status,
} from '../../src/index.js';
import { fastConfig, ledgerRows, manifestYaml, project, sandboxMoney, sha256File } from '../support/e2e.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const items = (n: number) =>
  `items:\n${Array.from({ length: n }, (_, i) => `  - {id: i${i}, prompt: clip ${i}}\n`).join('')}`;

/** Every event of a run, in order, to check what an API user hears (and that no key is in it). */
function record(handle: ReturnType<typeof run>) {
  const heard: Array<{ event: keyof RunEvents; payload: unknown }> = [];
  for (const event of ['item', 'progress', 'log', 'stop'] as const)
    handle.on(event, (payload: unknown) => heard.push({ event, payload }));
  return heard;
}

describe('the public API (src/index.ts), in process against the sandbox', () => {
  it('loads, plans, runs with events, reports status and exports; the key is in no event or result', async () => {
    sandbox = await startSandbox(fastConfig(), { port: 0 });
    const p = project('lib', `${manifestYaml('lib')}${items(3)}`);
    const manifest = loadManifest(p.manifest);
    expect((await plan(manifest)).summary).toContain('3');
    const options = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, env: {} };
    const handle = run(manifest, options);
    const heard = record(handle);
    const result = await handle.result;

    expect(result).toMatchObject({ outcome: 'done', started: true, stop: null });
    expect(result).not.toHaveProperty('exitCode');
    expect(result.status.totals).toMatchObject({ items: 3, done: 3 });
    expect(result.status.service).toBe(sandbox.baseUrl.replace(/\/+$/, ''));
    const doneEvents = heard.filter(
      (h) => h.event === 'item' && (h.payload as { state: string }).state === 'done',
    );
    expect(doneEvents.map((h) => (h.payload as { itemId: string }).itemId).sort()).toEqual([
      'i0',
      'i1',
      'i2',
    ]);
    expect(heard.some((h) => h.event === 'progress')).toBe(true);
    expect(JSON.stringify({ heard, result })).not.toContain(sandbox.apiKey);

    // The files are the sandbox's, byte for byte, and the ledger agrees with the sandbox's charges.
    for (const item of result.status.items) {
      const job = sandbox.records().jobs.find((j) => j.id === item.job_id)!;
      expect(sha256File(join(p.dir, item.files[0]!))).toBe(job.files[0]!.sha256);
    }
    const charged = sandboxMoney(sandbox, 'lib').chargedMicros;
    expect(ledgerRows<{ c: number }>(p, 'SELECT SUM(amount_micros) AS c FROM attempts')[0]!.c).toBe(charged);
    const read = await status(manifest);
    expect(read.totals).toEqual(result.status.totals);
    expect(read.items.map((item) => [item.id, item.state, item.files])).toEqual(
      result.status.items.map((item) => [item.id, item.state, item.files]),
    );
    expect((await exportItems(manifest, { states: ['done'] })).map((r) => r.id)).toEqual(['i0', 'i1', 'i2']);

    // A second run pays nothing more.
    const again = await run(manifest, options).result;
    expect(again.outcome).toBe('done');
    expect(sandboxMoney(sandbox, 'lib').chargedMicros).toBe(charged);
  });

  it('an abort drains like Ctrl-C: the result resolves with the drained state, a re-run finishes', async () => {
    sandbox = await startSandbox(fastConfig({ running_seconds: { min: 1.5, max: 2 } }), { port: 0 });
    const p = project('drain', `${manifestYaml('drain')}${items(6)}`);
    const manifest = loadManifest(p.manifest);
    const options = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, env: {} };
    const stop = new AbortController();
    const handle = run(manifest, { ...options, signal: stop.signal });
    const heard = record(handle);
    handle.once('item', () => stop.abort());
    const drained = await handle.result;
    expect(drained.outcome).toBe('interrupted');
    expect(drained.stop?.kind).toBe('draining');
    expect(heard.some((h) => h.event === 'stop')).toBe(true);
    // Draining submits nothing new: fewer jobs than items, each one saved or still in the ledger.
    const submitted = sandbox.records().jobs.length;
    expect(submitted).toBeLessThan(6);
    expect(drained.status.totals.pending).toBeGreaterThan(0);
    const finished = await run(manifest, options).result;
    expect(finished.outcome).toBe('done');
    expect(sandbox.records().jobs).toHaveLength(6);
  });

  it('drained before its first POST (a signal already aborted): the stop event and result say draining', async () => {
    sandbox = await startSandbox(fastConfig({ running_seconds: { min: 0.5, max: 0.8 } }), { port: 0 });
    const p = project('early', `${manifestYaml('early')}${items(3)}`);
    const options = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, env: {} };
    const handle = run(loadManifest(p.manifest), { ...options, signal: AbortSignal.abort() });
    const heard = record(handle);
    const drained = await handle.result;
    expect([drained.outcome, drained.started, drained.stop]).toEqual([
      'interrupted',
      false,
      { kind: 'draining' },
    ]);
    expect(heard.filter((h) => h.event === 'stop')).toHaveLength(1);
    expect(sandbox.records().jobs).toHaveLength(0);
  });

  it('a second run on the same ledger rejects with the CLI\'s "held by another run" error', async () => {
    sandbox = await startSandbox(fastConfig({ running_seconds: { min: 0.5, max: 0.8 } }), { port: 0 });
    const p = project('held', `${manifestYaml('held')}${items(2)}`);
    const manifest = loadManifest(p.manifest);
    const options = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, env: {} };
    const first = run(manifest, options);
    await new Promise<void>((resolve) => first.once('item', () => resolve()));
    const second = run(manifest, options).result;
    await expect(second).rejects.toBeInstanceOf(LedgerHeldError);
    await expect(second).rejects.toThrow(
      `the ledger ${p.ledger} is held by another live run; nothing was changed`,
    );
    expect((await first.result).outcome).toBe('done');
  });

  it('importJobs rebuilds a lost ledger with the same checks; the next run pays nothing again', async () => {
    sandbox = await startSandbox(fastConfig(), { port: 0 });
    const p = project('lost', `${manifestYaml('lost')}${items(2)}`);
    const manifest = loadManifest(p.manifest);
    const options = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, env: {} };
    expect((await run(manifest, options).result).outcome).toBe('done');
    const charged = sandboxMoney(sandbox, 'lost').chargedMicros;
    rmSync(p.ledger);
    // A new ledger while the service holds the manifest's jobs: the run refuses, as the CLI's does.
    await expect(run(manifest, options).result).rejects.toThrow(/import/);
    // The refused run left no new ledger behind.
    expect(existsSync(p.ledger)).toBe(false);
    const lines: string[] = [];
    const summary = await importJobs(manifest, { ...options, log: (line) => lines.push(line) });
    expect(summary.items.map((item) => [item.id, item.state])).toEqual([
      ['i0', 'done'],
      ['i1', 'done'],
    ]);
    expect(JSON.stringify({ summary, lines })).not.toContain(sandbox.apiKey);
    expect((await run(manifest, options).result).outcome).toBe('done');
    expect(sandboxMoney(sandbox, 'lost').chargedMicros).toBe(charged);
  });

  it('misuse fails fast with a typed error naming the option, before anything is opened', () => {
    const p = project('misuse', `${manifestYaml('misuse')}${items(1)}`);
    const manifest = loadManifest(p.manifest);
    const misuse = (options: unknown) => {
      try {
        run(manifest, options as never);
      } catch (error) {
        return error;
      }
      return null;
    };
    const wrongType = misuse({ ledger: 42 });
    expect(wrongType).toBeInstanceOf(OptionError);
    expect(wrongType).toBeInstanceOf(MediabatchError);
    // The option by its API name, in `fields` too (docs/api.md); no exit code: that is the CLI's.
    expect(wrongType).toMatchObject({
      option: 'ledger',
      code: 'invalid_option',
      fields: { option: 'ledger' },
    });
    expect(wrongType).not.toHaveProperty('exitCode');
    expect(misuse({ pollInterval: 5 })).toMatchObject({ option: 'pollInterval' });
    const secret = 'mg_secret_never_shown_1234';
    const badKey = misuse({ apiKey: 12, env: { X: secret }, only: 'i0' }) as Error;
    expect(badKey).toMatchObject({ option: 'apiKey' });
    expect(badKey.message).not.toContain(secret);
    expect(() => loadManifest({ yaml: 'version: 1\nname: x\n', baseDir: p.dir })).toThrow(ManifestError);
  });

  it('loadManifest lists every problem with file, line and column', () => {
    const p = project(
      'bad',
      'version: 1\nname: bad\ninput: {seconds: 2, definition: 480p}\nitems:\n  - {id: a}\n  - {id: a, prompt: x, bogus: 1}\n',
    );
    let error: unknown;
    try {
      loadManifest(p.manifest);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ManifestError);
    const problems = (error as ManifestError).problems;
    expect(problems.length).toBeGreaterThanOrEqual(2);
    for (const problem of problems) {
      expect(problem.file).toBe(p.manifest);
      expect(problem.line).toBeGreaterThanOrEqual(5);
      expect(problem.column).toBeGreaterThan(0);
    }
    expect((error as Error).message).toContain(`${p.manifest}:5:`);
    expect(readFileSync(p.manifest, 'utf8')).toContain('bogus');
  });
});
