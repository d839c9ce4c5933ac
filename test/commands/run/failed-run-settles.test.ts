import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { loadManifest, run, UserError } from '../../../src/index.js';
import { canMount } from '../../e2e/faults/support.js';
import { manifestYaml, startTestSandbox, waitUntil } from '../../support/e2e.js';
import { ownProject, takeItems } from '../../support/services.js';

/**
 * A run that fails (here its ledger's disk fills) gives its result only once nothing it sent is
 * still on the wire: a library caller that goes on to another run, or ends the process, leaves
 * no request of this one behind to land later. Requests are slow (a simulated latency), so some
 * are always in flight when the ledger fails.
 */
it.skipIf(!canMount() && process.env.CI !== 'true')(
  'a failed run answers only once every request it sent is answered',
  async () => {
    const sandbox = await startTestSandbox({
      faults: { latency_ms: { min: 100, max: 1_000 } },
      running_seconds: { min: 0, max: 0.5 },
    });
    onTestFinished(() => sandbox.close());
    const ids = Array.from({ length: 24 }, (_, i) => `i${i}`);
    const p = ownProject('settles', `${manifestYaml('settles', 'concurrency: 8\n')}${takeItems(ids)}`);
    const folder = join(p.ledger, '..');
    mkdirSync(folder, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', folder]);
    onTestFinished(() => {
      execFileSync('umount', ['-l', folder]);
    });
    const handle = run(loadManifest(p.manifest), {
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      env: {},
    });
    handle.result.catch(() => undefined);
    await waitUntil(() => sandbox.records().jobs.length >= 3, 20_000, 'the first jobs');
    expect(() => writeFileSync(join(folder, 'filler.bin'), Buffer.alloc(16 * 1024 * 1024))).toThrow(/ENOSPC/);
    const error = await handle.result.then(
      () => new Error('expected the run to fail'),
      (reason: unknown) => reason,
    );
    expect(error, (error as Error).stack).toBeInstanceOf(UserError);
    expect((error as UserError).code).toBe('ledger_write_failed');
    // Recorded on arrival with status 0 until answered: none is still waiting for its answer.
    const unanswered = sandbox.records().requests.filter((request) => request.status === 0);
    expect(unanswered.map((request) => `${request.method} ${request.path}`)).toEqual([]);
  },
  60_000,
);
