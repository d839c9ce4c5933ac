import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { KyselyLedger } from '../../src/ledger/kysely-ledger.js';
import { openLedger } from '../../src/ledger/open-ledger.js';
import { benchDir, removeDir } from './fixtures.js';

/**
 * Scenario 5: the ledger's durable write rate. One cycle is what a submission commits:
 * prepareAttempt (key and exact body, before the POST) then recordAccepted (the job and its cost),
 * two transactions on a real file in the OS temp dir, with the ledger's own WAL + synchronous=FULL.
 */
export const WRITE_CYCLES = 300;

export interface WriteSample {
  cyclesPerSecond: number;
  msPerCommit: number;
  synchronous: number;
  journalMode: string;
}

export async function writeRateRun(cycles = WRITE_CYCLES): Promise<WriteSample> {
  const dir = benchDir('ledger');
  const path = join(dir, 'ledger.sqlite');
  const ledger = await openLedger(
    { kind: 'sqlite', path, shown: path },
    'bench-writes',
    join(dir, 'batch.yaml'),
  );
  try {
    const ids = Array.from({ length: cycles }, (_, i) => `item-${i}`);
    await ledger.putItems(ids.map((itemId) => ({ itemId, state: 'pending', requestHash: 'h'.repeat(64) })));
    const body = JSON.stringify({
      input: { prompt: 'A paper lantern drifting at dusk', seconds: 2, definition: '480p' },
      metadata: {
        'mediabatch.manifest': 'bench-writes',
        'mediabatch.item': 'item-0',
        'mediabatch.attempt': '1',
      },
    });
    const started = performance.now();
    for (const itemId of ids) {
      const attempt = await ledger.prepareAttempt({
        itemId,
        seq: 1,
        idempotencyKey: `mb_${randomUUID()}`,
        requestBody: body,
        requestHash: 'h'.repeat(64),
        reservedMicros: 0,
      });
      await ledger.recordAccepted(attempt.id, 202, {
        jobId: `job_${randomBytes(12).toString('hex')}`,
        status: 'queued',
        amountMicros: 40_000,
        refundedMicros: 0,
        errorCode: null,
        errorMessage: null,
        expiresAt: null,
        completedAt: null,
      });
    }
    const elapsedMs = performance.now() - started;
    const settings = (await (ledger as KyselyLedger).settings())!;
    return {
      cyclesPerSecond: cycles / (elapsedMs / 1000),
      msPerCommit: elapsedMs / (cycles * 2),
      synchronous: settings.synchronous,
      journalMode: settings.journalMode,
    };
  } finally {
    await ledger.close();
    removeDir(dir);
  }
}
