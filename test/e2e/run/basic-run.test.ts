import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../../src/sandbox/index.js';
import {
  ledgerRows,
  manifestYaml,
  project,
  runAgainst,
  sandboxNetByItem,
  startTestSandbox,
} from '../../support/e2e.js';

let sandbox: SandboxHandle;
afterEach(async () => {
  await sandbox?.close();
});

describe('mediabatch run, the happy path', () => {
  it('turns every item into one paid job and a verified file, then does nothing on a re-run', async () => {
    sandbox = await startTestSandbox();
    const p = project(
      'happy',
      `${manifestYaml('happy')}items:\n  - {id: a, prompt: first}\n  - {id: b, prompt: second}\n  - {id: c, prompt: third}\n  - {id: d, prompt: fourth}\n`,
    );
    const first = await runAgainst(sandbox, p, ['--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.totals).toMatchObject({ items: 4, done: 4, failed: 0 });
    expect(report.items.map((item: { state: string }) => item.state)).toEqual([
      'done',
      'done',
      'done',
      'done',
    ]);

    const jobs = sandbox.records().jobs;
    expect(jobs).toHaveLength(4);
    for (const item of report.items) {
      const job = jobs.find((candidate) => candidate.id === item.job_id)!;
      expect(job.metadata).toMatchObject({
        'mediabatch.manifest': 'happy',
        'mediabatch.item': item.id,
        'mediabatch.attempt': '1',
      });
      const bytes = readFileSync(join(p.dir, item.files[0]));
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(job.files[0]!.sha256);
      expect(item.files[0]).toBe(`out/happy/${item.id}.mp4`);
    }
    const ledgerTotal = ledgerRows<{ net: number }>(
      p,
      'SELECT SUM(amount_micros - refunded_micros) AS net FROM attempts',
    )[0]!.net;
    const sandboxTotal = [...sandboxNetByItem(sandbox, 'happy').values()].reduce((a, b) => a + b, 0);
    expect(ledgerTotal).toBe(sandboxTotal);
    expect(report.totals.spent_usd).toBe((sandboxTotal / 1e6).toFixed(6));

    const posts = sandbox.records().requests.filter((request) => request.method === 'POST').length;
    const second = await runAgainst(sandbox, p, ['--json']);
    expect(second.code).toBe(0);
    expect(sandbox.records().jobs).toHaveLength(4);
    expect(sandbox.records().requests.filter((request) => request.method === 'POST').length).toBe(posts);
  });
});
