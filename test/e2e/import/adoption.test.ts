import { rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import {
  allPosts,
  cliEnv,
  expectMoneyAgrees,
  itemsById,
  jobsOfItem,
  killRunWhen,
  manifestYaml,
  project,
  runAgainst,
  startClockedSandbox,
  waitUntil,
} from '../../support/e2e.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const yaml = (dPrompt: string) =>
  `${manifestYaml('mixed', 'concurrency: 4\n')}items:\n` +
  '  - {id: a, prompt: "shot a"}\n' +
  '  - {id: b, prompt: "shot b [[fail:content_rejected]]"}\n' +
  // c runs a minute on the sandbox's clock, which only the test moves on: it is still running when
  // the run is killed and when the import looks, however slow the machine.
  '  - {id: c, prompt: "shot c [[run:60]]"}\n' +
  `  - {id: d, prompt: "${dPrompt}"}\n`;

describe('mediabatch import: what each item adopts', () => {
  it('follows a job still running, keeps a final failure, and lists the job of an edited item', async () => {
    const clocked = await startClockedSandbox();
    const sandbox: SandboxHandle = clocked.sandbox;
    cleanup.push(() => sandbox.close());
    const p = project('mixed', yaml('shot d'));
    cleanup.push(() => rmSync(p.dir, { recursive: true, force: true }));
    const status = (item: string) => jobsOfItem(sandbox, 'mixed', item)[0]?.status;
    await killRunWhen(sandbox, p, () =>
      waitUntil(
        () => status('a') === 'succeeded' && status('b') === 'failed' && status('d') === 'succeeded',
        20_000,
        'a and d done, b failed, c running',
      ),
    );
    expect(status('c')).toBe('running');
    rmSync(dirname(p.ledger), { recursive: true, force: true });
    writeFileSync(p.manifest, yaml('shot d, closer'));

    const postsBefore = allPosts(sandbox).length;
    const imported = await runCli(['import', p.manifest, '--json'], { cwd: p.dir, env: cliEnv(sandbox) });
    expect(imported.code, imported.stderr).toBe(0);
    const summary = JSON.parse(imported.stdout) as {
      items: Array<{ id: string; state: string; job_id: string | null; error: string | null }>;
      unmatched: Array<{ job_id: string; item: string; reason: string }>;
    };
    const job = (item: string) => jobsOfItem(sandbox, 'mixed', item)[0]!.id;
    expect(summary.items).toMatchObject([
      { id: 'a', state: 'done', job_id: job('a') },
      { id: 'b', state: 'failed', job_id: job('b'), error: 'content_rejected' },
      { id: 'c', state: 'in_flight', job_id: job('c') },
      { id: 'd', state: 'pending', job_id: null },
    ]);
    expect(summary.unmatched).toEqual([
      { job_id: job('d'), item: 'd', reason: 'changed_request', status: 'succeeded' },
    ]);

    clocked.advance(61);
    const rerun = await runAgainst(sandbox, p, ['--json']);
    expect(rerun.code).toBe(1);
    const items = itemsById(rerun.stdout);
    expect(items.get('c')).toMatchObject({ state: 'done', job_id: job('c') });
    expect(items.get('b')).toMatchObject({ state: 'failed' });
    expect(items.get('d')?.state).toBe('done');
    // The only new POST is the edited item's; c was followed, not paid again.
    const newPosts = allPosts(sandbox).slice(postsBefore);
    expect(newPosts).toHaveLength(1);
    expect(jobsOfItem(sandbox, 'mixed', 'd')).toHaveLength(2);
    expect(jobsOfItem(sandbox, 'mixed', 'c')).toHaveLength(1);
    await expectMoneyAgrees(sandbox, p, 'mixed');
  }, 60_000);
});
