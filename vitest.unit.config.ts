import { defineConfig } from 'vitest/config';

/**
 * The fast unit tests of the pure core and the download checks: no build, no CLI child process.
 * Mutation testing (stryker.config.mjs) runs only these, so a run takes minutes.
 */
export default defineConfig({
  test: {
    // A download test sets the process umask, which worker threads may not.
    pool: 'forks',
    include: [
      'test/runner/policy.test.ts',
      'test/runner/policy-rules.test.ts',
      'test/runner/stop-rules.test.ts',
      'test/runner/budget.test.ts',
      'test/runner/item-plan.test.ts',
      'test/runner/own-checks.test.ts',
      'test/runner/request.test.ts',
      'test/runner/decision-model.test.ts',
      'test/manifest/money.test.ts',
      'test/manifest/human-money.test.ts',
      'test/runner/money-edges.test.ts',
      'test/runner/item-plan-table.test.ts',
      'test/downloads/saved-file-check.test.ts',
      'test/documents/file-problems.test.ts',
      'test/runner/min-heap.test.ts',
      'test/runner/shown-ids.test.ts',
      'test/runner/look-timing-rules.test.ts',
      'test/runner/look-budget.test.ts',
      'test/runner/poll-timing.test.ts',
      'test/runner/poll-timing-branches.test.ts',
      'test/runner/poll-timing-sim.test.ts',
      'test/runner/save-estimate.test.ts',
      'test/runner/renames.test.ts',
      'test/runner/request-key.test.ts',
      'test/runner/kept-takes.test.ts',
      'test/runner/output-check.test.ts',
      'test/runner/reroll.test.ts',
      'test/runner/fallback.test.ts',
      'test/runner/narrow-read.test.ts',
      'test/runner/unsaved.test.ts',
      'test/runner/budget-words.test.ts',
      'test/runner/cap-only.test.ts',
      'test/runner/start-step.test.ts',
      'test/manifest/templates.test.ts',
      'test/notify/on-complete.test.ts',
      'test/documents/value-at-risk.test.ts',
      'test/downloads/*.test.ts',
      'test/manifest/s3-uri.test.ts',
      'test/storage/s3-rules.test.ts',
    ],
    testTimeout: 30_000,
  },
});
