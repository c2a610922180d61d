import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Integration tests start real PostgreSQL servers; two cores do not gain from more forks.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // skip-summary: how many tests were skipped and why, at the end of every run.
    reporters: ['default', './test/reporters/skip-summary.ts'],
  },
});
