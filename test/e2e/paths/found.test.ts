import { describe, it } from 'vitest';
import { tempDir } from '../../support/temp.js';
import type { Step, Target } from './path-steps.js';
import { replaySteps } from './paths-model.js';

/**
 * The sequences the user paths model found breaking a promise on today's main, shrunk, each
 * replayed with every check of path-checks.ts. They fail until the product is fixed, so they run
 * only with PATHS_FOUND=1 (`PATHS_FOUND=1 npx vitest run test/e2e/paths/found.test.ts`); once one
 * passes, it moves to user-paths.test.ts and its step kind leaves KNOWN_FAILING (path-steps.ts).
 * The first step of each is the run every drawn sequence starts with.
 */
const replay = (steps: Step[]) => replaySteps(steps, tempDir('mediabatch-found-'));
const TIMEOUT = 180_000;

const run: Step = { kind: 'run' };
const regenerate: Step = { kind: 'regenerate' };
const time: Step = { kind: 'time' };
/** c, a twin of a (the same prompt): its run copies a's take. */
const twinOfA: Step = { kind: 'twin', of: 0, id: 2 };

describe.runIf(process.env.PATHS_FOUND === '1')('counterexamples found by the user paths model', () => {
  const protectedTargets: Array<[Target, string]> = [
    ['manifest', 'the manifest'],
    ['ledger', 'the ledger'],
    ['video', 'a saved video'],
    ['sidecar', "a saved video's sidecar"],
  ];
  for (const command of ['plan', 'export'] as const)
    for (const [target, words] of protectedTargets)
      it(
        `${command} --out naming ${words} writes over it`,
        async () => {
          await replay([run, { kind: 'write', command, target }]);
        },
        TIMEOUT,
      );

  it(
    'an undone edit copies the first take, and status, export and the sidecar name another job or none',
    async () => {
      await replay([run, { kind: 'edit', at: 0, prompt: 2 }, run, { kind: 'undo' }, run]);
    },
    TIMEOUT,
  );

  it(
    'an earlier take altered on disk is bought again although its job still holds the output',
    async () => {
      await replay([
        run,
        { kind: 'edit', at: 0, prompt: 2 },
        run,
        { kind: 'alter', file: 1 },
        { kind: 'undo' },
        run,
      ]);
    },
    TIMEOUT,
  );

  it(
    'past retention, a deleted video is bought again by --regenerate-expired although its twin holds a copy',
    async () => {
      await replay([run, twinOfA, run, time, { kind: 'delete', file: 0 }, regenerate]);
    },
    TIMEOUT,
  );

  it(
    'two days on, a plain import finds nothing, and plan prices items that run then leaves for stray files',
    async () => {
      await replay([run, time, time, { kind: 'import' }, run]);
    },
    TIMEOUT,
  );
});
