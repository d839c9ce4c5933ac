import { describe, it } from 'vitest';
import { removeTempDir, tempDir } from '../../support/temp.js';
import { KNOWN_FAILING, parseSkip } from './path-steps.js';
import { checkPaths } from './paths-model.js';

/**
 * What people do between runs, as random sequences (paths-model.ts): runs to the end and killed,
 * edits and undos, swaps, renames, twins, removals, files altered or deleted, variants, keep, a lost
 * ledger and import, redo, days passing, and the documents written to any path. After every step,
 * the promises of path-checks.ts hold. `PATHS_SKIP` (comma-separated step kinds, or `none`) leaves
 * kinds out; by default the kinds known to break a promise on today's main are left out (the
 * sequences that showed it are in found.test.ts). `PATHS_SEED`, `PATHS_RUNS`, `PATHS_STEPS` replay
 * or widen the bounded set; `npm run bench -- paths` runs a longer one.
 */
const numberFrom = (text: string | undefined, fallback: number) =>
  text === undefined ? fallback : Number(text);

describe('the user paths model', () => {
  it('keeps every promise over a bounded set of seeded sequences', async () => {
    await checkPaths({
      seed: numberFrom(process.env.PATHS_SEED, 504),
      numRuns: numberFrom(process.env.PATHS_RUNS, 4),
      maxCommands: numberFrom(process.env.PATHS_STEPS, 10),
      skip: parseSkip(process.env.PATHS_SKIP, KNOWN_FAILING),
      ignore: new Set((process.env.PATHS_IGNORE ?? '').split(',').filter(Boolean)),
      makeDir: () => tempDir('mediabatch-paths-'),
      removeDir: removeTempDir,
      shrink: process.env.PATHS_SHRINK !== '0',
      log: process.env.PATHS_LOG === '1' ? (line) => process.stderr.write(`${line}\n`) : undefined,
    });
  }, 600_000);
});
