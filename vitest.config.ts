import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Files whose promise is a pace measured on the wall clock (gaps between looks, a refresh within a
 * second, outputs kept only 5 s): they run after every other file, one at a time, so that the
 * suite's own files never take their CPU.
 */
const PACED = [
  'test/e2e/run/download-promises.test.ts',
  'test/e2e/run/poll-rate.test.ts',
  'test/e2e/run/resume-pace.test.ts',
];

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks',
} as const;

export default defineConfig({
  test: {
    // Runs once for the whole run, before either project's files.
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'side-by-side',
          include: ['test/**/*.test.ts'],
          exclude: ['test/bench/**', 'node_modules/**', ...PACED],
          // One test file per core, at least two at once. Vitest's default (one fewer than the
          // cores) ran a file at a time on CI's two cores, and most of a file's time is waiting:
          // on the CLI's children, the sandbox's clocks, PostgreSQL, Swift, chromium. Files share
          // nothing (own temp folders, free ports, own servers and tmux sockets).
          maxWorkers: Math.max(2, availableParallelism()),
        },
      },
      {
        test: {
          ...shared,
          name: 'paced',
          include: PACED,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
