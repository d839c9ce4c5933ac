import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import { openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { job, newAttempt } from '../support/ledger-fixtures.js';
import { skipPostgresTests, usePostgresServer } from '../support/postgres-server.js';
import { tempDir } from '../support/temp.js';

/**
 * How many times a shared run waits for its database per item (docs/performance.md): a 200-item
 * run simulated through the ledger steps a run takes, counted as the bench counts them, from what
 * the ledger publishes when it closes (`mediabatch:postgres-connection-closed`).
 */

const ITEMS = 200;
const SLOTS = 50;
const CLOSED = 'mediabatch:postgres-connection-closed';

interface Counts {
  roundTrips: number;
  statements: number;
}

/** The counts the ledger publishes as it closes. */
async function counted(work: () => Promise<Ledger>): Promise<Counts> {
  let counts: Counts | null = null;
  const listener = (message: unknown) => {
    counts = message as Counts;
  };
  subscribe(CLOSED, listener);
  try {
    await (await work()).close();
  } finally {
    unsubscribe(CLOSED, listener);
  }
  return counts!;
}

/** One item's life after its admission: answered, seen running, then done, saved, let go. */
async function follow(ledger: Ledger, attemptId: number, itemId: string): Promise<void> {
  await ledger.recordAccepted(attemptId, 202, job(`j-${itemId}`, { status: 'queued', amountMicros: 100 }));
  await ledger.recordJob(attemptId, job(`j-${itemId}`, { status: 'running', amountMicros: 100 }));
  await ledger.recordJob(attemptId, job(`j-${itemId}`, { status: 'succeeded', amountMicros: 100 }));
  const files = [{ idx: 0, path: `/out/${itemId}.mp4`, bytes: 10, sha256: 's' }];
  await ledger.recordFilesSaved(attemptId, files, { itemId, update: { state: 'done' } });
  await ledger.claims!.release([itemId]);
}

/** The run: items written, a first wave of admissions, then one admission per item that ends. */
async function run(url: string): Promise<Ledger> {
  const ledger = await openLedger(
    postgresLocation(url, {}),
    'b',
    join(tempDir('mediabatch-trips-'), 'm.yaml'),
    {
      runnerId: 'host:1',
    },
  );
  const ids = Array.from({ length: ITEMS }, (_, n) => `item-${String(n).padStart(3, '0')}`);
  await ledger.putItems(
    ids.map((itemId) => ({ itemId, requestHash: `h-${itemId}`, state: 'pending' as const })),
  );
  const runId = await ledger.startRun(process.pid);
  const room = { slotLimit: SLOTS, budgetMicros: null };
  const first = await ledger.claims!.prepare(
    ids.slice(0, SLOTS).map((id) => newAttempt(id, 1)),
    room,
  );
  const waiting = [...first.admitted];
  // The run's other steps, a few per hundred items: the look at the job list, the lease renewals.
  for (let next = SLOTS, followed = 1; waiting.length > 0; followed += 1) {
    const attempt = waiting.shift()!;
    await follow(ledger, attempt.id, attempt.itemId);
    if (followed % 10 === 0) await ledger.claims!.takeListerLease(1_000);
    if (followed % 50 === 0) await ledger.claims!.renew();
    if (next < ITEMS)
      waiting.push(...(await ledger.claims!.prepare([newAttempt(ids[next++]!, 1)], room)).admitted);
  }
  await ledger.endRun(runId, 0);
  return ledger;
}

describe.skipIf(skipPostgresTests)('a shared run’s round trips', () => {
  const postgres = usePostgresServer();

  it(`takes at most 6 per item over a ${ITEMS}-item run`, async () => {
    const url = await postgres.server.createDatabase('trips');
    const { roundTrips, statements } = await counted(() => run(url));
    const perItem = roundTrips / ITEMS;
    console.info(
      `round trips: ${roundTrips} over ${ITEMS} items, ${perItem.toFixed(2)} per item (${statements} statements, ${(statements / ITEMS).toFixed(2)} per item), opening and closing included`,
    );
    expect(perItem).toBeLessThanOrEqual(6);
  }, 120_000);
});
