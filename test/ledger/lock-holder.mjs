// Child process: holds the run lock of a ledger until killed. Run with `node --import tsx`.
import { acquireLedgerLock } from '../../src/ledger/lock.ts';

const lock = acquireLedgerLock(process.argv[2]);
process.stdout.write(lock ? 'held\n' : 'busy\n');
setInterval(() => undefined, 1000);
