import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { demoSandboxConfig, startSandbox } from '../../../src/sandbox/index.js';
import { runCli, spawnCli } from '../../support/cli.js';
import {
  asSandboxRun,
  checkSavedOutputs,
  ledgerRows,
  manifestYaml,
  project,
  waitUntil,
} from '../../support/e2e.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('run --sandbox: the embedded sandbox keeps its jobs across a kill', () => {
  it('resumes the jobs in flight after SIGKILL: same ids, one net charge per item, no job_not_found', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const items = ids.map((id) => `  - {id: ${id}, prompt: "shot ${id} [[run:1.5]]"}\n`).join('');
    const p = project('demo-kill', `${manifestYaml('demo-kill', 'concurrency: 3\n')}items:\n${items}`);
    dirs.push(p.dir);
    const args = ['run', p.manifest, '--sandbox', '--ledger', p.ledger, '--poll-interval', '0.1'];
    const first = spawnCli(args, { cwd: p.dir });
    const inFlight = () =>
      ledgerRows<{ n: number }>(
        p,
        "SELECT COUNT(*) AS n FROM attempts WHERE state = 'accepted' AND job_status IN ('queued', 'running')",
      )[0]!.n;
    await waitUntil(() => inFlight() >= 2, 20_000, 'two jobs in flight');
    const before = ledgerRows<{ item_id: string; job_id: string }>(
      p,
      "SELECT item_id, job_id FROM attempts WHERE state = 'accepted'",
    );
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');

    const second = await runCli([...args, '--json'], { cwd: p.dir });
    expect(second.code, second.stderr).toBe(0);
    expect(`${second.stdout}${second.stderr}`).not.toContain('job_not_found');
    const report = JSON.parse(second.stdout) as {
      items: Array<{ id: string; state: string; job_id: string }>;
    };
    for (const { item_id, job_id } of before)
      expect(report.items.find((item) => item.id === item_id)?.job_id).toBe(job_id);
    expect(report.items.map((item) => item.state)).toEqual(ids.map(() => 'done'));

    // The sandbox's own records, read back from its state file.
    const records = await startSandbox(demoSandboxConfig(), {
      port: 0,
      statePath: `${p.ledger}.sandbox.jsonl`,
    });
    try {
      expect(
        checkSavedOutputs(records, { ...asSandboxRun(p, 'demo-kill'), ledger: p.ledger }, 'demo-kill', ids)
          .problems,
      ).toEqual([]);
      expect(records.records().jobs).toHaveLength(ids.length);
    } finally {
      await records.close();
    }
  }, 60_000);
});
