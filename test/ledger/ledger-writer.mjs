// Child process for crash tests: writes attempts through the real Ledger until killed. Run with
// `node --import tsx` on the sources (ledger.test.ts), so that it needs no build.
import { openLedger } from '../../src/ledger/open-ledger.ts';

const [path] = process.argv.slice(2);
const ledger = await openLedger({ kind: 'sqlite', path, shown: path }, 'crash', '/tmp/crash.yaml');
await ledger.putItems(
  Array.from({ length: 50 }, (_, i) => ({ itemId: `item-${i}`, requestHash: 'h', state: 'pending' })),
);
for (let n = 0; ; n += 1) {
  const itemId = `item-${n % 50}`;
  const attempt = await ledger.prepareAttempt({
    itemId,
    seq: n + 1,
    idempotencyKey: `key-${n}`,
    requestBody: JSON.stringify({ input: { prompt: 'x'.repeat(200) }, n }),
    requestHash: 'h',
    reservedMicros: 1000,
  });
  await ledger.recordAccepted(attempt.id, 202, {
    jobId: `job_${n}`,
    status: 'queued',
    amountMicros: 1000,
    refundedMicros: 0,
    errorCode: null,
    errorMessage: null,
    expiresAt: null,
    completedAt: null,
  });
  // Said once an attempt is in the ledger: a kill from then on always finds rows to check.
  if (n === 0) process.stdout.write('writing\n');
}
