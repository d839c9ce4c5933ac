import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import { openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { job, newAttempt } from '../support/ledger-fixtures.js';
import { skipPostgresTests, usePostgresServer } from '../support/postgres-server.js';
import { tempDir } from '../support/temp.js';

/**
 * The shared ledger's one lister per batch (docs/shared-ledger.md, "One lister"): the batch's look
 * at the service's job list, a lease of one turn, and the views of the other runners' jobs it
 * writes for them. A ledger held by one run has no claims, so no lister: it lists for itself.
 */

const TURN_MS = 300;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(skipPostgresTests)('the shared ledger’s lister', () => {
  const postgres = usePostgresServer();
  let url: string;
  let root: string;
  const open: Ledger[] = [];

  afterAll(async () => {
    for (const ledger of open.splice(0)) await ledger.close();
  });
  beforeEach(async () => {
    for (const ledger of open.splice(0)) await ledger.close();
    url = await postgres.server.createDatabase('lister');
    root = tempDir('mediabatch-lister-');
  });

  async function runner(runnerId: string): Promise<Ledger> {
    const ledger = await openLedger(postgresLocation(url, {}), 'b', join(root, 'm.yaml'), {
      runnerId,
      leaseMs: 10_000,
      reconnectWithinMs: 1000,
    });
    open.push(ledger);
    return ledger;
  }

  /** Accepted attempts of `ids`, their jobs `j<id>`, created by the service at `createdAt`. */
  async function accepted(ledger: Ledger, createdAt: string | null, ...ids: string[]): Promise<void> {
    await ledger.putItems(ids.map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })));
    for (const attempt of await ledger.prepareAttempts(ids.map((id) => newAttempt(id, 1))))
      await ledger.recordAccepted(attempt.id, 202, job(`j${attempt.itemId}`, { createdAt }));
  }

  it('gives the look to one runner at a time, its holder keeping it while it looks within a turn', async () => {
    const one = await runner('r1');
    const two = await runner('r2');
    await accepted(one, '2026-11-26T10:00:00.000Z', 'a');
    await accepted(two, null, 'b');
    // The batch's unfinished jobs, every runner's, each with the service's creation time where kept.
    expect(await one.claims!.takeListerLease(TURN_MS)).toEqual(
      expect.arrayContaining([
        { jobId: 'ja', createdAt: '2026-11-26T10:00:00.000Z', preparedAt: expect.any(String) },
        { jobId: 'jb', createdAt: null, preparedAt: expect.any(String) },
      ]),
    );
    expect(await two.claims!.takeListerLease(TURN_MS)).toBeNull();
    expect(await one.claims!.takeListerLease(TURN_MS)).toHaveLength(2);
    // A final job is no longer looked for.
    await one.recordJob((await one.listAttempts())[0]!.id, job('ja', { status: 'succeeded' }));
    await sleep(TURN_MS + 150);
    // Nobody looked for a turn: the next runner to look takes it, and holds it.
    expect(await two.claims!.takeListerLease(TURN_MS)).toEqual([expect.objectContaining({ jobId: 'jb' })]);
    expect(await one.claims!.takeListerLease(TURN_MS)).toBeNull();
    // Its holder lets it go with everything it holds (ending, or idle): taken at once.
    await two.claims!.release();
    expect(await one.claims!.takeListerLease(TURN_MS)).toHaveLength(1);
    expect(await two.claims!.takeListerLease(TURN_MS)).toBeNull();
    // Or on its own, following nothing more; another runner's release leaves it be.
    await two.claims!.releaseListerLease();
    expect(await two.claims!.takeListerLease(TURN_MS)).toBeNull();
    await one.claims!.releaseListerLease();
    expect(await two.claims!.takeListerLease(TURN_MS)).toHaveLength(1);
  });

  it('keeps the views the lister wrote for their runners, a final one never replaced, dropped once recorded', async () => {
    const one = await runner('r1');
    const two = await runner('r2');
    await accepted(two, null, 'b', 'c');
    expect(await one.claims!.takeListerLease(TURN_MS)).toHaveLength(2);
    const view = (jobId: string, status: string) => ({
      jobId,
      status,
      job: `{"id":"${jobId}","s":"${status}"}`,
    });
    await one.claims!.publishViews([view('jb', 'running'), view('jc', 'succeeded')], ['jb', 'jc']);
    expect(await two.claims!.jobViews(['jb', 'jc', 'jx'])).toEqual(
      expect.arrayContaining([view('jb', 'running'), view('jc', 'succeeded')]),
    );
    expect(await two.claims!.jobViews([])).toEqual([]);
    // A lister that lost its turn mid-look cannot put an older state over a final one.
    await one.claims!.publishViews([view('jb', 'succeeded'), view('jc', 'running')], ['jb', 'jc']);
    expect(await two.claims!.jobViews(['jb', 'jc'])).toEqual(
      expect.arrayContaining([view('jb', 'succeeded'), view('jc', 'succeeded')]),
    );
    // c's runner recorded it final: its view (and its output URLs) goes with the next write.
    const c = (await two.listAttempts()).find((attempt) => attempt.itemId === 'c')!;
    await two.recordJob(c.id, job('jc', { status: 'succeeded' }));
    await one.claims!.publishViews([], ['jb']);
    expect(await two.claims!.jobViews(['jb', 'jc'])).toEqual([view('jb', 'succeeded')]);
    // The last lister lets the look go: the views read since its last write go with it.
    const b = (await two.listAttempts()).find((attempt) => attempt.itemId === 'b')!;
    await two.recordJob(b.id, job('jb', { status: 'succeeded' }));
    await one.claims!.releaseListerLease();
    expect(await two.claims!.jobViews(['jb', 'jc'])).toEqual([]);
  });
});
