// Child process: holds the run lock of a ledger until killed.
import { acquireLedgerLock } from '../../dist/ledger/lock.js';

const lock = acquireLedgerLock(process.argv[2]);
process.stdout.write(lock ? 'held\n' : 'busy\n');
setInterval(() => undefined, 1000);
