import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  allPosts,
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  startTestSandbox,
} from '../../support/e2e.js';

/**
 * Saving keeps up with paying (issue 52, part 1; docs/performance.md): with downloads slower than
 * jobs, a run never holds more outputs paid for and not yet saved than its bound, says when it
 * waits for saving, and finishes. Measured from outside the run: each job is paid from its
 * creation on the service until its file's save is recorded in the ledger.
 */

const BOUND = 5;
const ITEMS = 20;

let sandbox: SandboxHandle | null = null;
afterEach(async () => {
  await sandbox?.close();
  sandbox = null;
});

describe('the bound on outputs paid for and not yet saved', () => {
  it(`with slow downloads, never more than --max-unsaved ${BOUND} at once, and the run finishes`, async () => {
    const s = await startTestSandbox({
      workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 4 }],
      // Jobs take 0.1-0.3 s; a download takes about 0.8 s: paying would outrun saving threefold.
      faults: { download_bytes_per_second: 3000 },
    });
    sandbox = s;
    const name = 'unsaved-bound';
    const items = Array.from({ length: ITEMS }, (_, i) => `  - {id: u${i}, prompt: scene ${i}}`);
    const p = project(name, `${manifestYaml(name, 'concurrency: 4\n')}items:\n${items.join('\n')}\n`);

    const result = await runAgainst(s, p, ['--max-unsaved', String(BOUND)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('saving first: ');
    expect(result.stdout).toContain(`the most the run holds at once (${BOUND})`);
    expect(allPosts(s)).toHaveLength(ITEMS);

    const saved = new Map(
      ledgerRows<{ job_id: string; saved_at: string }>(
        p,
        `SELECT a.job_id, MIN(f.saved_at) AS saved_at FROM files f JOIN attempts a ON a.id = f.attempt_id
          GROUP BY a.job_id`,
      ).map((row) => [row.job_id, Date.parse(row.saved_at)]),
    );
    const jobs = s.records().jobs;
    expect(jobs.every((job) => saved.has(job.id))).toBe(true);
    // Paid from the job's creation until its save is recorded; an end before a start at one time.
    const moments = jobs.flatMap((job) => [
      { at: Date.parse(job.createdAt), delta: 1 },
      { at: saved.get(job.id)!, delta: -1 },
    ]);
    moments.sort((a, b) => a.at - b.at || a.delta - b.delta);
    let held = 0;
    let most = 0;
    for (const moment of moments) {
      held += moment.delta;
      most = Math.max(most, held);
    }
    expect(most).toBeLessThanOrEqual(BOUND);
    // The bound was reached, not merely respected from afar.
    expect(most).toBe(BOUND);
  }, 90_000);
});
