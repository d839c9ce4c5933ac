import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../../src/sandbox/store.js';
import { spawnCli } from '../../support/cli.js';
import { cliEnv, manifestYaml, project, startTestSandbox } from '../../support/e2e.js';
import { skipPostgresTests, usePostgresServer } from '../../support/postgres-server.js';
import { readSharedLedger, sharedViolations } from './shared-support.js';

/**
 * One lister per batch (docs/shared-ledger.md, "One lister"): of several runners on one shared
 * ledger, one at a time lists the service's jobs, for all of them; the others read what it saw
 * from the ledger. Each runner here sends with its own API key of the one workspace, so the
 * sandbox's records tell whose request each was.
 */

const RUNNERS = 3;
const keyOf = (runner: number) => `mg_test_key_lister_${runner}`;

describe.skipIf(skipPostgresTests)('one lister per batch of a shared ledger', () => {
  const postgres = usePostgresServer();

  it('three runners on one batch: one of them at a time looks at the job list, for all three', async () => {
    const url = await postgres.server.createDatabase('lister');
    const sandbox = await startTestSandbox({
      keys: Array.from({ length: RUNNERS }, (_, i) => ({ key: keyOf(i), id: i + 1, workspace: 'ws_test' })),
      workspaces: [{ id: 'ws_test', balance_usd: '1000.00', wallet_enabled: true, concurrency_limit: 12 }],
      running_seconds: { min: 0.8, max: 1.6 },
      retry_after_seconds: 0.5,
    });
    const name = 'shared-lister';
    const items = Array.from(
      { length: 60 },
      (_, i) => `  - {id: l${String(i).padStart(2, '0')}, prompt: take ${i}}`,
    );
    const p = project(name, `${manifestYaml(name, 'concurrency: 12\n')}items:\n${items.join('\n')}\n`);
    const args = ['run', p.manifest, '--ledger', url, '--poll-interval', '0.5', '--json'];
    // Each runner its own third of the items, so that every one of them follows jobs of its own
    // whoever lists: left to share freely, the first runner up could take every slot on a busy machine.
    const thirds = ['l0*,l1*', 'l2*,l3*', 'l4*,l5*'];
    try {
      const ends = await Promise.all(
        Array.from(
          { length: RUNNERS },
          (_, i) =>
            spawnCli([...args, '--only', thirds[i]!], {
              cwd: p.dir,
              env: cliEnv(sandbox, keyOf(i)),
              timeoutMs: 90_000,
            }).done,
        ),
      );
      expect(
        ends.map((end) => end.code),
        ends.map((end) => end.stderr).join('\n'),
      ).toEqual([0, 0, 0]);
      const rows = await readSharedLedger(url, name);
      expect(
        sharedViolations(sandbox, rows, { name, dir: p.dir, budgetMicros: Infinity, concurrency: 12 }),
      ).toEqual([]);
      const requests = sandbox.records().requests;
      // Several runners worked the batch, each following jobs of its own.
      const posters = new Set(requests.filter((r) => r.method === 'POST').map((r) => r.keyId));
      // The looks (a listing's first page) come from one runner for long stretches: the look
      // changes hands when its lister has nothing more to follow, or did not look for a turn. Runners
      // listing each for itself would hand it over at almost every look.
      const looks = requests.filter((r) => r.path === '/v1/jobs' && !r.query?.includes('cursor='));
      const handovers = looks.filter((r, i) => i > 0 && r.keyId !== looks[i - 1]!.keyId).length;
      console.log(
        `one lister: ${looks.length} looks, ${handovers} handovers, ${perJobGets(requests)} job GETs, ` +
          `runners that sent jobs: ${posters.size}, looks by runner: ${[...countBy(looks)].join(' ')}`,
      );
      expect(posters.size).toBe(RUNNERS);
      expect(looks.length).toBeGreaterThan(10);
      expect(handovers).toBeLessThanOrEqual(Math.max(6, looks.length / 5));
      // The others read their jobs from the ledger: no runner fetches its jobs one by one instead.
      expect(perJobGets(requests)).toBeLessThanOrEqual(6);
    } finally {
      await sandbox.close();
    }
  }, 120_000);
});

function perJobGets(requests: readonly RequestRecord[]): number {
  return requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/jobs/')).length;
}

function countBy(requests: readonly RequestRecord[]): Map<number | undefined, number> {
  const counts = new Map<number | undefined, number>();
  for (const r of requests) counts.set(r.keyId, (counts.get(r.keyId) ?? 0) + 1);
  return counts;
}
