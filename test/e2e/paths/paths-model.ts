import fc from 'fast-check';
import { applies, applyStep } from './path-apply.js';
import { firstRunArbitrary, type SkipName, type Step, stepArbitraries, stepText } from './path-steps.js';
import { PathsWorld } from './paths-world.js';

/**
 * The model-based test of the user's paths: fast-check draws sequences of steps, each sequence
 * runs on a fresh project and sandbox, and every step is followed by the checks of path-checks.ts.
 * A failure carries the steps and the commands they ran, with their exit codes.
 */
export interface PathsOptions {
  seed: number;
  numRuns: number;
  maxCommands: number;
  skip: ReadonlySet<SkipName>;
  /** Invariant numbers only logged, not failed (exploring past a known failure; never in npm test). */
  ignore?: ReadonlySet<string>;
  /** A fresh empty folder for one sequence's project. */
  makeDir: () => string;
  removeDir: (dir: string) => void;
  /** Told of each sequence as it starts and ends. */
  log?: (line: string) => void;
  /** False: stop at the first failure unshrunk (exploring: a shrink replays tens of sequences). */
  shrink?: boolean;
}

/** A drawn step; the world is its own model (what the test wrote and knows is what it checks against). */
class StepCommand implements fc.AsyncCommand<PathsWorld, PathsWorld> {
  constructor(readonly step: Step) {}
  /** A step that would change nothing now (no edit to undo, no video to alter) is not drawn. */
  check(world: Readonly<PathsWorld>): boolean {
    return applies(world, this.step);
  }
  run(_model: PathsWorld, world: PathsWorld): Promise<void> {
    return applyStep(world, this.step);
  }
  toString(): string {
    return stepText(this.step);
  }
}

/** Runs `steps` on a fresh project; a broken promise throws with the transcript of what ran. */
export async function replaySteps(steps: readonly Step[], dir: string): Promise<void> {
  const world = await PathsWorld.start(dir);
  try {
    for (const step of steps) await withTranscript(world, () => applyStep(world, step));
  } finally {
    await world.close();
  }
}

async function withTranscript(world: PathsWorld, act: () => Promise<void>): Promise<void> {
  try {
    await act();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}\n--- what ran ---\n${world.transcript.join('\n')}`, { cause: error });
  }
}

export interface PathsFigures {
  sequences: number;
  steps: number;
  elapsedMs: number;
}

/**
 * Draws and runs `numRuns` sequences; throws fast-check's report (shrunk) on the first failure.
 * `figures` counts what ran, shrinking included, also when it throws.
 */
export async function checkPaths(
  options: PathsOptions,
  figures: PathsFigures = { sequences: 0, steps: 0, elapsedMs: 0 },
): Promise<PathsFigures> {
  const started = performance.now();
  const commands = fc.commands(
    stepArbitraries(options.skip).map((arb) => arb.map((step) => new StepCommand(step))),
    { maxCommands: options.maxCommands, size: 'max' },
  );
  await fc
    .assert(
      fc.asyncProperty(firstRunArbitrary(options.skip), commands, async (first, cmds) => {
        const dir = options.makeDir();
        const world = await PathsWorld.start(dir, { ignored: options.ignore });
        figures.sequences += 1;
        try {
          // Every sequence starts with a run (to its end, or killed), so that each drawn step acts
          // on paid results.
          await withTranscript(world, () => applyStep(world, first));
          await withTranscript(world, () => fc.asyncModelRun(() => ({ model: world, real: world }), cmds));
          const noted = (what: string, seen: string[]) =>
            seen.length > 0 ? ` (${what}: ${[...new Set(seen)].join('; ')})` : '';
          const ignored = noted('ignored', world.ignoredSeen);
          options.log?.(
            `sequence ${figures.sequences}: ${stepText(first)}, ${String(cmds)} passed${ignored}`,
          );
        } finally {
          figures.steps += world.transcript.filter((line) => line.startsWith('> ')).length;
          await world.close();
          options.removeDir(dir);
        }
      }),
      {
        seed: options.seed,
        numRuns: options.numRuns,
        verbose: 1,
        includeErrorInReport: true,
        endOnFailure: options.shrink === false,
      },
    )
    .finally(() => {
      figures.elapsedMs = performance.now() - started;
    });
  return figures;
}
