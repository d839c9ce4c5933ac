import { describe, it } from 'vitest';
import { tempDir } from '../../support/temp.js';
import type { Step } from './path-steps.js';
import { replaySteps } from './paths-model.js';

/**
 * One fixed walk through every step kind the model draws, with every check of path-checks.ts after
 * each step, strictly: the seeded random sequences of user-paths.test.ts are short
 * and may miss a kind, this never does. It runs beside them (a file of its own), in `npm test`.
 */
const TOUR: Step[] = [
  { kind: 'kill', after: 'post', count: 1 },
  { kind: 'run' },
  { kind: 'edit', at: 0, prompt: 2 },
  { kind: 'twin', of: 1, id: 2 },
  { kind: 'run' },
  { kind: 'undo' },
  { kind: 'swap', at: 0, with: 1 },
  { kind: 'rename', at: 2, to: 3 },
  { kind: 'run' },
  { kind: 'remove', at: 0 },
  { kind: 'variants', count: 2 },
  { kind: 'kill', after: 'file', count: 1 },
  { kind: 'run' },
  { kind: 'restore' },
  { kind: 'keep', at: 0, variant: 2 },
  { kind: 'alter', file: 0 },
  { kind: 'delete', file: 3 },
  { kind: 'run' },
  { kind: 'redo', at: 1 },
  { kind: 'write', command: 'plan', target: 'ledger' },
  { kind: 'write', command: 'export', target: 'fresh' },
  { kind: 'write', command: 'report', target: 'video' },
  { kind: 'time' },
  { kind: 'delete', file: 0 },
  { kind: 'regenerate' },
  { kind: 'import' },
  { kind: 'run' },
];

describe('the user paths model', () => {
  it('walks every step kind once and keeps every promise', async () => {
    await replaySteps(TOUR, tempDir('mediabatch-tour-'));
  }, 300_000);
});
