import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One test file per core, at least two at once. Vitest's default (one fewer than the cores)
    // ran a file at a time on CI's two cores, and most of a file's time is waiting: on the CLI's
    // children, the sandbox's clocks, PostgreSQL, Swift, chromium. Files share nothing (own temp
    // folders, free ports, own servers and tmux sockets), so any two can run side by side.
    maxWorkers: Math.max(2, availableParallelism()),
    globalSetup: ['test/support/global-setup.ts'],
  },
});
