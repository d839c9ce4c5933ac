// Child process for crash tests: writes attempts through the real (built) Ledger until killed.
import { SqliteLedger as Ledger } from '../../dist/ledger/sqlite-ledger.js';

const [path] = process.argv.slice(2);
const ledger = Ledger.open(path, 'crash', '/tmp/crash.yaml');
ledger.putItems(
  Array.from({ length: 50 }, (_, i) => ({ itemId: `item-${i}`, requestHash: 'h', state: 'pending' })),
);
process.stdout.write('ready\n');
for (let n = 0; ; n += 1) {
  const itemId = `item-${n % 50}`;
  const attempt = ledger.prepareAttempt({
    itemId,
    seq: n + 1,
    idempotencyKey: `key-${n}`,
    requestBody: JSON.stringify({ input: { prompt: 'x'.repeat(200) }, n }),
    requestHash: 'h',
    reservedMicros: 1000,
  });
  ledger.recordAccepted(attempt.id, 202, {
    jobId: `job_${n}`,
    status: 'queued',
    amountMicros: 1000,
    refundedMicros: 0,
    errorCode: null,
    errorMessage: null,
    expiresAt: null,
    completedAt: null,
  });
}
