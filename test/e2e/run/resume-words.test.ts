import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { waitForOutput } from '../../support/cli.js';
import {
  allPosts,
  manifestYaml,
  project,
  runAgainst,
  spawnRun,
  startClockedSandbox,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

const RESUME = 'interrupted or unfinished: re-run the same command to resume';
const itemsYaml = (ids: string[]) =>
  `items:\n${ids.map((id) => `  - {id: ${id}, prompt: take ${id}}\n`).join('')}`;

/**
 * Issue 41, item 3: "re-run the same command to resume" was printed after a drain that had
 * finished every item, and after a run that sent nothing because files were in its items' way.
 */
describe('mediabatch run: "re-run to resume" only when a re-run resumes something', () => {
  it('a drain that finished every item says nothing of resuming, and exits 0', async () => {
    const clocked = await startClockedSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 10 }],
      running_seconds: { min: 30, max: 30 },
    });
    sandbox = clocked.sandbox;
    const ids = ['a', 'b', 'c'];
    const p = project('drained', `${manifestYaml('drained', 'concurrency: 3\n')}${itemsYaml(ids)}`);
    const { child, done } = spawnRun(sandbox, p);
    // Every item is sent before the signal: the drain only finishes them.
    await waitUntil(() => allPosts(sandbox).length === 3, 10_000, 'three accepted jobs');
    await waitForOutput(child, (text) => text.includes('3/3 slots in use'));
    child.kill('SIGINT');
    await waitForOutput(child, (text) => text.includes('stopping'));
    clocked.advance(31);
    const result = await done;
    expect(result.stdout).toContain('drained: 3/3 done, 0 failed, 0 over budget, 0 expired, 0 unfinished');
    expect(result.stdout).not.toContain(RESUME);
    expect(result.code, result.stderr).toBe(0);
  });

  it('a run that sent nothing because files are in the way says what to move, not to resume', async () => {
    sandbox = await startTestSandbox();
    const p = project('inway', `${manifestYaml('inway')}${itemsYaml(['one', 'two'])}`);
    mkdirSync(p.outDir, { recursive: true });
    for (const id of ['one', 'two']) writeFileSync(join(p.outDir, `${id}.mp4`), 'not ours');
    const result = await runAgainst(sandbox, p);
    expect(result.code).toBe(1);
    expect(allPosts(sandbox)).toHaveLength(0);
    expect(result.stdout).toContain('one: not submitted: out/inway/one.mp4 is in the way');
    expect(result.stdout).not.toContain(RESUME);
    expect(result.stdout).toContain(
      '2 items were not submitted: a file this ledger did not write is in the way (named above); move it, then re-run.',
    );
  });
});
