// Mutation testing of the pure core and the download checks (docs/testing.md). `npm run mutate`;
// not part of `npm test`. Only the fast unit tests run against each mutant (vitest.unit.config.ts).
export default {
  testRunner: 'vitest',
  // forks: a download test sets the process umask, which worker threads may not.
  vitest: { configFile: 'vitest.unit.config.ts', related: false, pool: 'forks' },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'src/runner/policy.ts',
    'src/runner/stop-rules.ts',
    'src/runner/budget.ts',
    'src/runner/item-plan.ts',
    'src/runner/request.ts',
    'src/money.ts',
    'src/downloads/*.ts',
  ],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  timeoutMS: 10_000,
};
