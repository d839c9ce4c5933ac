import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  allPosts,
  expectMoneyAgrees,
  jobsOfItem,
  manifestYaml,
  runAgainst,
  spawnRun,
  startTestSandbox,
  waitUntil,
} from '../../support/e2e.js';
import { itemStates, ownProject, requestLog, takeItems } from '../../support/services.js';

let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

describe('run --only', () => {
  it('runs just the items named or matched, and leaves the others as they are', async () => {
    sandbox = await startTestSandbox();
    const p = ownProject(
      'subset',
      `${manifestYaml('subset')}${takeItems(['beach-1', 'beach-2', 'city-1', 'city-2'])}`,
    );
    const beaches = await runAgainst(sandbox, p, ['--only', 'beach-*']);
    expect(beaches.code, beaches.stderr).toBe(0);
    expect(beaches.stdout).toContain('--only: 2 of 4 items were run');
    expect(itemStates(p)).toEqual({ 'beach-1': 'done', 'beach-2': 'done' });
    expect(allPosts(sandbox)).toHaveLength(2);

    const typo = await runAgainst(sandbox, p, ['--only', 'citty-1']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("--only citty-1 matches no item of subset, did you mean 'city-1'?");
    expect(allPosts(sandbox)).toHaveLength(2);

    const cities = await runAgainst(sandbox, p, ['--only', 'city-1', 'city-2', '--only', 'beach-1,beach-2']);
    expect(cities.code, cities.stderr).toBe(0);
    expect(Object.values(itemStates(p))).toEqual(['done', 'done', 'done', 'done']);
    for (const id of ['beach-1', 'beach-2', 'city-1', 'city-2'])
      expect(jobsOfItem(sandbox, 'subset', id)).toHaveLength(1);
    await expectMoneyAgrees(sandbox, p, 'subset');
  });
});

describe('model_busy timing', () => {
  it('waits about 30 s before resubmitting, whatever --poll-interval is', async () => {
    sandbox = await startTestSandbox();
    const p = ownProject(
      'busy',
      `${manifestYaml('busy')}items:\n  - {id: a, prompt: "x [[fail:model_busyx1]]"}\n`,
    );
    // Polling every 0.1 s: the old rule (three poll intervals) resubmitted after 0.3 s.
    const { child, done } = spawnRun(sandbox, p);
    await waitUntil(
      () => sandbox!.records().jobs.some((job) => job.status === 'failed'),
      10_000,
      'the model_busy failure',
    );
    await waitUntil(() => itemStates(p).a === 'pending:model_busy', 10_000, 'the item to wait');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(jobsOfItem(sandbox, 'busy', 'a')).toHaveLength(1);
    const posts = requestLog(sandbox).filter((line) => line.startsWith('POST'));
    expect(posts).toHaveLength(1);
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    expect(itemStates(p).a).toBe('pending:model_busy');
  });
});
