import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'loadtest/test/**/*.test.ts'],
    globalSetup: ['./test/support/global-setup.ts'],
    // Test files run in parallel, each against its own database and Redis key prefix.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
