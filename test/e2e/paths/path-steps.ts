import fc from 'fast-check';

/**
 * What a person does between runs, as data: a step names its choices by index (taken modulo what
 * is there when it runs), so every sequence applies to any state, shrinks freely, and a sequence
 * found by the model replays as a plain list in a named test.
 */
export type Target = 'fresh' | 'manifest' | 'ledger' | 'video' | 'sidecar';
export type KillAfter = 'post' | 'download' | 'file';

export type Step =
  | { kind: 'run' }
  | { kind: 'kill'; after: KillAfter; count: number }
  | { kind: 'edit'; at: number; prompt: number }
  | { kind: 'undo' }
  | { kind: 'swap'; at: number; with: number }
  | { kind: 'rename'; at: number; to: number }
  | { kind: 'twin'; of: number; id: number }
  | { kind: 'remove'; at: number }
  | { kind: 'restore' }
  | { kind: 'alter'; file: number }
  | { kind: 'delete'; file: number }
  | { kind: 'variants'; count: number }
  | { kind: 'keep'; at: number; variant: number }
  | { kind: 'import' }
  | { kind: 'redo'; at: number }
  | { kind: 'regenerate' }
  | { kind: 'time' }
  | { kind: 'write'; command: DocumentCommand; target: Target };

/** The commands that write a document to a path: `plan --out`, `export --out`, `report --html`. */
export type DocumentCommand = 'plan' | 'export' | 'report';

export type StepKind = Step['kind'];

/** `out-targets` is not a step of its own: it leaves out the protected `--out`/`--html` targets. */
export const STEP_KINDS = [
  'run',
  'kill',
  'edit',
  'undo',
  'swap',
  'rename',
  'twin',
  'remove',
  'restore',
  'alter',
  'delete',
  'variants',
  'keep',
  'import',
  'redo',
  'regenerate',
  'time',
  'write',
  'out-targets',
] as const;

export type SkipName = (typeof STEP_KINDS)[number];

/**
 * The kinds left out by default because they break a promise on today's main (each with its
 * sequence in found.test.ts), so that the bounded set in `npm test` proves what holds. None today:
 * every kind is drawn, and every promise is held strictly. `PATHS_SKIP` names kinds to leave out.
 */
export const KNOWN_FAILING: readonly SkipName[] = [];

/** Parses `PATHS_SKIP` (comma-separated kinds; `none` for none); unknown names are refused. */
export function parseSkip(text: string | undefined, fallback: readonly SkipName[]): Set<SkipName> {
  if (text === undefined) return new Set(fallback);
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && name !== 'none');
  for (const name of names)
    if (!(STEP_KINDS as readonly string[]).includes(name))
      throw new Error(`PATHS_SKIP: unknown step kind '${name}' (known: ${STEP_KINDS.join(', ')}, none)`);
  return new Set(names as SkipName[]);
}

const index = fc.nat(5);

const killArbitrary = fc.record({
  kind: fc.constant('kill' as const),
  after: fc.constantFrom<KillAfter>('post', 'download', 'file'),
  count: fc.integer({ min: 1, max: 3 }),
});

/**
 * The first step of every sequence: a run, to its end or (unless `kill` is skipped) killed, the
 * one moment a kill lands among new items rather than a few changed ones. It shrinks to a run.
 */
export function firstRunArbitrary(skip: ReadonlySet<SkipName>): fc.Arbitrary<Step> {
  const run = fc.constant<Step>({ kind: 'run' });
  return skip.has('kill')
    ? run
    : fc.oneof({ arbitrary: run, weight: 2 }, { arbitrary: killArbitrary, weight: 1 });
}

/** Every kind of step not in `skip`; runs weigh more, as they are where money and files move. */
export function stepArbitraries(skip: ReadonlySet<SkipName>): Array<fc.Arbitrary<Step>> {
  const targets: Target[] = skip.has('out-targets')
    ? ['fresh']
    : ['fresh', 'manifest', 'ledger', 'video', 'sidecar'];
  const target = fc.constantFrom(...targets);
  const arbs: Array<[StepKind, fc.Arbitrary<Step>, number]> = [
    ['run', fc.constant({ kind: 'run' as const }), 6],
    ['regenerate', fc.constant({ kind: 'regenerate' as const }), 2],
    ['kill', killArbitrary, 2],
    ['redo', fc.record({ kind: fc.constant('redo' as const), at: index }), 1],
    ['edit', fc.record({ kind: fc.constant('edit' as const), at: index, prompt: index }), 2],
    ['undo', fc.constant({ kind: 'undo' as const }), 2],
    ['swap', fc.record({ kind: fc.constant('swap' as const), at: index, with: index }), 1],
    ['rename', fc.record({ kind: fc.constant('rename' as const), at: index, to: index }), 1],
    ['twin', fc.record({ kind: fc.constant('twin' as const), of: index, id: index }), 2],
    ['remove', fc.record({ kind: fc.constant('remove' as const), at: index }), 1],
    ['restore', fc.constant({ kind: 'restore' as const }), 1],
    [
      'variants',
      fc.record({ kind: fc.constant('variants' as const), count: fc.integer({ min: 1, max: 2 }) }),
      1,
    ],
    ['alter', fc.record({ kind: fc.constant('alter' as const), file: fc.nat(20) }), 2],
    ['delete', fc.record({ kind: fc.constant('delete' as const), file: fc.nat(20) }), 2],
    ['time', fc.constant({ kind: 'time' as const }), 2],
    ['import', fc.constant({ kind: 'import' as const }), 1],
    [
      'keep',
      fc.record({ kind: fc.constant('keep' as const), at: index, variant: fc.integer({ min: 1, max: 2 }) }),
      1,
    ],
    [
      'write',
      fc.record({
        kind: fc.constant('write' as const),
        command: fc.constantFrom<DocumentCommand>('plan', 'export', 'report'),
        target,
      }),
      1,
    ],
  ];
  return arbs
    .filter(([kind]) => !skip.has(kind))
    .flatMap(([, arb, weight]) => Array.from({ length: weight }, () => arb));
}

/** One step as the JSON a regression test replays. */
export function stepText(step: Step): string {
  return JSON.stringify(step);
}
