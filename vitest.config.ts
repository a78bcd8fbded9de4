import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Files run in parallel, each with its own database and queue prefix; the machine has 2 cores
    // and most test time is spent waiting on sockets, so a few more workers than cores pays off.
    maxWorkers: 4,
    // Generous: CLI tests start node processes, slow on 2 loaded cores; no test asserts timings.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
