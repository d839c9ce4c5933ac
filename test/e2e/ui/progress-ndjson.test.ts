import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import { manifestYaml, project, runAgainst, startTestSandbox } from '../../support/e2e.js';

let sandbox: SandboxHandle;
const p = project(
  'nd',
  manifestYaml('nd', 'budget_usd: "5.00"\nitems:\n  - {id: one, prompt: a}\n  - {id: two, prompt: b}\n'),
);
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox.close();
  rmSync(p.dir, { recursive: true, force: true });
});

describe('run --progress ndjson', () => {
  it('streams one JSON event per line on stderr, while --json keeps stdout for its document', async () => {
    const result = await runAgainst(sandbox, p, ['--json', '--progress', 'ndjson']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).totals.done).toBe(2);
    const events = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events[0]).toEqual({
      event: 'plan',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      summary:
        'Plan: 2 new; at most $5.00 (no price seen yet for this model and input) (budget left $5.00 of $5.00).',
    });
    expect(events.at(-1)).toMatchObject({ event: 'finished', outcome: 'done', exit_code: 0 });
    const items = events
      .filter((event) => event.event === 'item')
      .map((event) => `${event.item} ${event.state}`);
    expect(items.sort()).toEqual(['one done', 'one in_flight', 'two done', 'two in_flight']);
    const last = events.findLast((event) => event.event === 'progress');
    const spent = sandbox.records().jobs.reduce((sum, job) => sum + job.amountMicros, 0);
    expect(last).toMatchObject({
      total: 2,
      by_state: { done: 2, pending: 0 },
      spent_usd: (spent / 1e6).toFixed(6),
      budget_usd: '5.000000',
    });
  });

  it('refuses a format it does not know, before anything is sent', async () => {
    const before = sandbox.records().requests.length;
    const result = await runAgainst(sandbox, p, ['--progress', 'ndjsn']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--progress accepts ndjson, not 'ndjsn', did you mean 'ndjson'?");
    expect(sandbox.records().requests.length).toBe(before);
  });
});
