import { copyLedger, loadManifest } from '../../src/index.js';
import { startPostgresServer } from '../support/postgres-server.js';
import {
  BIG_COMMANDS,
  type BigSample,
  bigCommand,
  buildBigLedger,
  EXPORT_COMMANDS,
} from './big-ledger-bench.js';
import { removeDir } from './fixtures.js';

/** One command's samples on the SQLite ledger and on the same batch copied into PostgreSQL. */
export interface SharedReadSample {
  command: string;
  sqlite: BigSample[];
  postgres: BigSample[];
}

/**
 * Scenario 14 (`npm run bench -- shared-reads`, only when named: it starts a PostgreSQL server):
 * the 100,000-item all-done ledger of scenarios 4 and 9, copied whole into a PostgreSQL database
 * (copy-ledger), and status, plan and export run over both, one after the other, `runs` times each.
 * The goal: on PostgreSQL within 2x of SQLite's time.
 */
export async function sharedReadSamples(
  runs: number,
  log: (line: string) => void,
): Promise<SharedReadSample[]> {
  log('shared-reads: building the 100,000-item ledger and copying it into PostgreSQL');
  const big = await buildBigLedger();
  const server = await startPostgresServer();
  try {
    const url = await server.createDatabase('reads');
    await copyLedger(loadManifest(big.manifestFile), { to: url, ledger: big.ledgerPath, cwd: big.dir });
    const shared = { ...big, ledgerPath: url };
    const samples: SharedReadSample[] = [];
    for (const command of [...BIG_COMMANDS, ...EXPORT_COMMANDS]) {
      const sample: SharedReadSample = { command, sqlite: [], postgres: [] };
      for (let i = 1; i <= runs; i += 1) {
        log(`shared-reads: mediabatch ${command} (${i}/${runs}), SQLite then PostgreSQL`);
        sample.sqlite.push(await bigCommand(big, command));
        sample.postgres.push(await bigCommand(shared, command));
      }
      samples.push(sample);
    }
    return samples;
  } finally {
    await server.stop();
    removeDir(big.dir);
  }
}
