import { KNOWN_FAILING, parseSkip } from '../e2e/paths/path-steps.js';
import { checkPaths, type PathsFigures } from '../e2e/paths/paths-model.js';
import { benchDir, removeDir } from './fixtures.js';
import { type Row, summarize } from './stats.js';

/**
 * `npm run bench -- paths`: the user paths model (test/e2e/paths/) over many more and longer
 * sequences than the bounded set in `npm test`. The same variables tune it: PATHS_SEED, PATHS_RUNS
 * (default 40 sequences), PATHS_STEPS (default 16 steps at most), PATHS_SKIP (default: the kinds known
 * to fail on today's main), PATHS_IGNORE (invariant numbers only logged, to look past a known failure).
 * A counterexample fails the row and is printed whole, shrunk, with the commands it ran.
 */
export interface PathsBench {
  seed: number;
  numRuns: number;
  maxCommands: number;
  skip: string[];
  figures: PathsFigures;
  counterexample: string | null;
}

const numberFrom = (text: string | undefined, fallback: number) =>
  text === undefined ? fallback : Number(text);

export async function pathsRun(log: (line: string) => void): Promise<PathsBench> {
  const skip = parseSkip(process.env.PATHS_SKIP, KNOWN_FAILING);
  const bench: PathsBench = {
    seed: numberFrom(process.env.PATHS_SEED, 5005),
    numRuns: numberFrom(process.env.PATHS_RUNS, 40),
    maxCommands: numberFrom(process.env.PATHS_STEPS, 16),
    skip: [...skip],
    figures: { sequences: 0, steps: 0, elapsedMs: 0 },
    counterexample: null,
  };
  log(
    `paths: ${bench.numRuns} sequences of up to ${bench.maxCommands} steps, seed ${bench.seed}, skipping ${bench.skip.join(', ') || 'nothing'}`,
  );
  try {
    await checkPaths(
      {
        seed: bench.seed,
        numRuns: bench.numRuns,
        maxCommands: bench.maxCommands,
        skip,
        ignore: new Set((process.env.PATHS_IGNORE ?? '').split(',').filter(Boolean)),
        makeDir: () => benchDir('paths'),
        removeDir,
        log,
      },
      bench.figures,
    );
  } catch (error) {
    bench.counterexample = error instanceof Error ? error.message : String(error);
    log(`paths: counterexample\n${bench.counterexample}`);
  }
  return bench;
}

export function pathsRows(bench: PathsBench): Row[] {
  const row = (figure: string, unit: string, digits: number, value: number): Row => ({
    scenario: '15 user paths',
    figure,
    unit,
    digits,
    summary: summarize([value]),
  });
  return [
    row('sequences run (shrinking included)', 'count', 0, bench.figures.sequences),
    row('steps run', 'count', 0, bench.figures.steps),
    row('wall time per step', 's', 2, bench.figures.elapsedMs / 1000 / Math.max(1, bench.figures.steps)),
    {
      ...row('counterexamples found', 'count', 0, bench.counterexample === null ? 0 : 1),
      target: { op: '<=', value: 0 },
    },
  ];
}
