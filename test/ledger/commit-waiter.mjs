// Child process for group-commit.test.ts: waits for a group's commit with nothing else holding the
// process open, then says so. Run with `node --import tsx` on the sources.
import { openLedger } from '../../src/ledger/open-ledger.ts';

const [path] = process.argv.slice(2);
const ledger = await openLedger({ kind: 'sqlite', path, shown: path }, 'group', '/tmp/group.yaml');
ledger.groupCommits(300);
await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
await ledger.committed();
process.stdout.write('committed\n');
await ledger.close();
